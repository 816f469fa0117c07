import { createCipheriv, createDecipheriv, randomBytes } from 'node:crypto';

const ALGORITHM = 'aes-256-gcm';
export const GCM_IV_BYTES = 12;
export const GCM_TAG_BYTES = 16;

/** AES-256-GCM under `key` with `aad` as associated data: iv | ciphertext | tag. */
export function sealGcm(key: Buffer, plaintext: Buffer, aad: string): Buffer {
  const iv = randomBytes(GCM_IV_BYTES);
  const cipher = createCipheriv(ALGORITHM, key, iv, { authTagLength: GCM_TAG_BYTES });
  cipher.setAAD(Buffer.from(aad, 'utf8'));
  const body = Buffer.concat([cipher.update(plaintext), cipher.final()]);
  return Buffer.concat([iv, body, cipher.getAuthTag()]);
}

/**
 * The inverse of sealGcm; throws (Node's error, or `tooShort()`) when the tag, key or associated
 * data do not match. Callers turn any throw into their own error that says nothing more.
 */
export function openGcm(
  key: Buffer,
  sealed: Buffer,
  aad: string,
  tooShort: () => Error = () => new Error('sealed value too short'),
): Buffer {
  // GCM would verify a shorter tag and so accept forgeries found by brute-forcing a few bytes:
  // the tag is always the full 16 bytes, and authTagLength makes Node refuse anything else too.
  if (sealed.length < GCM_IV_BYTES + GCM_TAG_BYTES) throw tooShort();
  const iv = sealed.subarray(0, GCM_IV_BYTES);
  const tag = sealed.subarray(sealed.length - GCM_TAG_BYTES);
  const decipher = createDecipheriv(ALGORITHM, key, iv, { authTagLength: GCM_TAG_BYTES });
  decipher.setAAD(Buffer.from(aad, 'utf8'));
  decipher.setAuthTag(tag);
  return Buffer.concat([decipher.update(sealed.subarray(GCM_IV_BYTES, sealed.length - GCM_TAG_BYTES)), decipher.final()]);
}
