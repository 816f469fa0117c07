import { openGcm, sealGcm } from '../aes-gcm';
import { Keyring } from '../keyring';

/** A short secret sealed at rest, with the id of the key that sealed it (what a rotation looks for). */
export interface SealedSecret {
  kid: string;
  sealed: Buffer;
}

/** Where a sealed secret lives: the row's owner and the column. Both are bound into the associated data. */
export interface SecretBinding {
  merchantId: string;
  column: string;
}

/** Opening failed: a wrong key, a tampered value, or a value sealed for another row or column. Says nothing more. */
export class SecretOpenError extends Error {
  override name = 'SecretOpenError';

  constructor(reason = 'The sealed secret could not be opened.') {
    super(reason);
  }
}

/** The keyring lacks the key a secret was sealed under (a deployment that has not been given it yet). */
export class SecretKeyMissingError extends SecretOpenError {
  override name = 'SecretKeyMissingError';

  constructor(kid: string) {
    super(`The sealed secret is under key "${kid}", which this keyring does not hold.`);
  }
}

function aad(kid: string, { merchantId, column }: SecretBinding): string {
  // '|' separates the fields; allowing it inside one would let two bindings share associated data.
  if (!merchantId || !column || merchantId.includes('|') || column.includes('|'))
    throw new Error('A secret binding needs a merchantId and column, neither containing "|".');
  return `secret|v1|${kid}|${merchantId}|${column}`;
}

/**
 * AES-256-GCM directly under the active key of `ring` (a secret is a few dozen bytes: no data
 * key). The associated data binds the format version, the key id, the row and the column, so a
 * sealed value copied to another merchant or column, or relabelled with another key id, does
 * not open.
 */
export function sealSecret(ring: Keyring, plaintext: string, binding: SecretBinding): SealedSecret {
  const { kid, key } = ring.active;
  return { kid, sealed: sealGcm(key, Buffer.from(plaintext, 'utf8'), aad(kid, binding)) };
}

export function openSecret(ring: Keyring, secret: SealedSecret, binding: SecretBinding): string {
  const key = ring.get(secret.kid);
  if (!key) throw new SecretKeyMissingError(secret.kid);
  const context = aad(secret.kid, binding);
  try {
    return openGcm(key, secret.sealed, context).toString('utf8');
  } catch {
    throw new SecretOpenError();
  }
}

/** Re-seals under the active key (unchanged when already there). */
export function resealSecret(ring: Keyring, secret: SealedSecret, binding: SecretBinding): SealedSecret {
  if (secret.kid === ring.active.kid) return secret;
  return sealSecret(ring, openSecret(ring, secret, binding), binding);
}
