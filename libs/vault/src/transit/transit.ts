import { createSecretKey, KeyObject } from 'node:crypto';
import { CompactEncrypt, compactDecrypt } from 'jose';
import { Keyring } from '../keyring';

export type TransitFailure = 'unknown_kid' | 'unreadable';

/**
 * A sealed payload could not be opened. Deliberately carries no cause: jose and JSON.parse
 * messages can quote the input, and the input is card data.
 */
export class TransitError extends Error {
  override name = 'TransitError';

  constructor(readonly reason: TransitFailure) {
    super(
      reason === 'unknown_kid'
        ? 'The sealed payload names a transit key this keyring does not hold.'
        : 'The sealed payload is malformed or was tampered with.',
    );
  }
}

const ALG = 'dir';
const ENC = 'A256GCM';

// One KeyObject per keyring entry, made on first use: seal/open run per request.
const keyObjects = new WeakMap<Keyring, Map<string, KeyObject>>();

function keyFor(keyring: Keyring, kid: string): KeyObject | undefined {
  let cache = keyObjects.get(keyring);
  if (!cache) keyObjects.set(keyring, (cache = new Map<string, KeyObject>()));
  let key = cache.get(kid);
  if (!key) {
    const raw = keyring.get(kid);
    if (!raw) return undefined;
    cache.set(kid, (key = createSecretKey(raw)));
  }
  return key;
}

/**
 * Seals a JSON value for the one other process holding the transit keyring (JWE compact, direct
 * A256GCM). The kid travels in the protected header, so keys rotate without a flag day.
 */
export function sealJson(keyring: Keyring, value: unknown): Promise<string> {
  const { kid } = keyring.active;
  return new CompactEncrypt(new TextEncoder().encode(JSON.stringify(value)))
    .setProtectedHeader({ alg: ALG, enc: ENC, kid })
    .encrypt(keyFor(keyring, kid)!);
}

export async function openJson<T>(keyring: Keyring, jwe: string): Promise<T> {
  let plaintext: Uint8Array;
  try {
    ({ plaintext } = await compactDecrypt(
      jwe,
      (header) => {
        const key = typeof header.kid === 'string' ? keyFor(keyring, header.kid) : undefined;
        if (!key) throw new TransitError('unknown_kid');
        return key;
      },
      // Pinning both algorithms stops a forged header from choosing a weaker or asymmetric one.
      { keyManagementAlgorithms: [ALG], contentEncryptionAlgorithms: [ENC] },
    ));
  } catch (e) {
    throw e instanceof TransitError ? e : new TransitError('unreadable');
  }
  try {
    return JSON.parse(new TextDecoder('utf-8', { fatal: true }).decode(plaintext)) as T;
  } catch {
    throw new TransitError('unreadable');
  }
}
