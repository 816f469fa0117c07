import { createHmac } from 'node:crypto';
import { Keyring } from '../keyring';

/**
 * Dedup key for "same merchant, same card" (DESIGN.md 3.4). Keyed, because an unkeyed hash of a
 * 16-digit number with a known BIN is brute-forced in minutes; scoped per merchant, so equal
 * fingerprints never link one person's card across merchants. The kid prefix says which key made
 * it, so after a rotation a lookup can also try the older kids (pass `kid`).
 */
export function cardFingerprint(keyring: Keyring, merchantId: string, pan: string, kid: string = keyring.active.kid): string {
  const key = keyring.get(kid);
  if (!key) throw new Error('cardFingerprint: the keyring has no key with that id');
  // NUL cannot occur in a card number, so merchant and number cannot run into each other.
  const mac = createHmac('sha256', key).update(`${merchantId}\0${pan}`, 'utf8').digest('base64url');
  return `${kid}.${mac}`;
}

/**
 * The card's fingerprint under every key of the ring, the active one first. During a rotation
 * a card vaulted before it is stored under an older kid; dedup looks it up under all of these
 * (keyrings are a handful of keys, so this stays one short `= ANY` list).
 */
export function cardFingerprints(keyring: Keyring, merchantId: string, pan: string): string[] {
  const others = keyring.kids().filter((kid) => kid !== keyring.active.kid);
  return [keyring.active.kid, ...others].map((kid) => cardFingerprint(keyring, merchantId, pan, kid));
}

/** The key id a stored fingerprint was made with (what precedes the first dot). */
export function fingerprintKid(fingerprint: string): string {
  const dot = fingerprint.indexOf('.');
  return dot < 0 ? '' : fingerprint.slice(0, dot);
}
