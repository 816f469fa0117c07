import { randomBytes } from 'node:crypto';
import { GCM_IV_BYTES as IV_BYTES, GCM_TAG_BYTES as TAG_BYTES, openGcm as open, sealGcm as seal } from '../aes-gcm';
import { Keyring } from '../keyring';

export interface SealedRecord {
  kekId: string;
  wrappedKey: Buffer;
  ciphertext: Buffer;
}

/** Which row a record belongs to; bound into the associated data of both layers. */
export interface RecordBinding {
  merchantId: string;
  token: string;
}

/** Decryption failed. Never says more: no key material, no plaintext, no cause. */
export class VaultDecryptError extends Error {
  override name = 'VaultDecryptError';

  constructor(reason = 'The vault record could not be decrypted.') {
    super(reason);
  }
}

const KEY_BYTES = 32;

function checkBinding({ merchantId, token }: RecordBinding): void {
  // '|' separates the associated-data fields; allowing it inside one would let two different
  // rows share the same associated data.
  if (!merchantId || !token || merchantId.includes('|') || token.includes('|'))
    throw new Error('A vault record binding needs a merchantId and token, neither containing "|".');
}

const recordAad = (b: RecordBinding) => `card|v1|${b.merchantId}|${b.token}`;
const dekAad = (kekId: string, b: RecordBinding) => `dek|v1|${kekId}|${b.merchantId}|${b.token}`;

function unwrapKey(kek: Keyring, sealed: SealedRecord, binding: RecordBinding): Buffer {
  const key = kek.get(sealed.kekId);
  if (!key) throw new VaultDecryptError('The vault record is wrapped by a key-encryption key this keyring does not hold.');
  if (sealed.wrappedKey.length !== IV_BYTES + KEY_BYTES + TAG_BYTES) throw new VaultDecryptError();
  return open(key, sealed.wrappedKey, dekAad(sealed.kekId, binding));
}

/** Any failure, including Node's own, becomes a VaultDecryptError without a cause. */
function guarded<T>(fn: () => T): T {
  try {
    return fn();
  } catch (e) {
    throw e instanceof VaultDecryptError ? e : new VaultDecryptError();
  }
}

/**
 * Envelope encryption (DESIGN.md 3.3): a fresh data key per record, wrapped by the active
 * key-encryption key. Both layers bind merchant and token, so a ciphertext copied to another row
 * does not decrypt; the wrapped key also binds the KEK version, so a record cannot be replayed
 * under a different kid.
 */
export function encryptRecord(kek: Keyring, plaintext: Buffer, binding: RecordBinding): SealedRecord {
  checkBinding(binding);
  const { kid, key } = kek.active;
  const dek = randomBytes(KEY_BYTES);
  try {
    return { kekId: kid, wrappedKey: seal(key, dek, dekAad(kid, binding)), ciphertext: seal(dek, plaintext, recordAad(binding)) };
  } finally {
    // Keeps the data key's lifetime in memory as short as we control.
    dek.fill(0);
  }
}

export function decryptRecord(kek: Keyring, sealed: SealedRecord, binding: RecordBinding): Buffer {
  return guarded(() => {
    checkBinding(binding);
    const dek = unwrapKey(kek, sealed, binding);
    try {
      return open(dek, sealed.ciphertext, recordAad(binding));
    } finally {
      dek.fill(0);
    }
  });
}

/**
 * Moves a record's data key under the active KEK, leaving the ciphertext as it is: rotation is
 * one small write per row and a half-done run is just a mix of old and new kids, both readable.
 */
export function rewrapRecord(kek: Keyring, sealed: SealedRecord, binding: RecordBinding): SealedRecord {
  if (sealed.kekId === kek.active.kid) return sealed;
  return guarded(() => {
    checkBinding(binding);
    const dek = unwrapKey(kek, sealed, binding);
    try {
      const { kid, key } = kek.active;
      return { kekId: kid, wrappedKey: seal(key, dek, dekAad(kid, binding)), ciphertext: sealed.ciphertext };
    } finally {
      dek.fill(0);
    }
  });
}
