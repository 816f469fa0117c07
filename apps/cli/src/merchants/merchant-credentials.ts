import { createHash, randomBytes, randomUUID } from 'node:crypto';

/** 256 random bits: a hash without salt or stretching is enough to store such a key safely. */
export function newMerchantKey(): { key: string; hash: Buffer } {
  const key = `mk_${randomBytes(32).toString('base64url')}`;
  return { key, hash: createHash('sha256').update(key).digest() };
}

/** Standard Webhooks secret format: whsec_ + base64 of 24 to 64 random bytes. */
export function newWebhookSecret(): string {
  return `whsec_${randomBytes(32).toString('base64')}`;
}

export function newMerchantId(): string {
  return randomUUID();
}
