import { createHash, randomBytes } from 'node:crypto';

/**
 * 256 random bits: a hash without salt or stretching is enough to store such a key safely.
 * `mk_` + 43 base64url characters = 46 characters, within the 51 the SDKs of this API family accept.
 */
export function newMerchantKey(): { key: string; hash: Buffer } {
  const key = `mk_${randomBytes(32).toString('base64url')}`;
  return { key, hash: createHash('sha256').update(key).digest() };
}

/** Standard Webhooks secret format: whsec_ + base64 of 24 to 64 random bytes. */
export function newWebhookSecret(): string {
  return `whsec_${randomBytes(32).toString('base64')}`;
}
