import { randomInt } from 'node:crypto';
import { isLuhnValid } from '@app/card/luhn';

/**
 * A merchant's public id: what merchant:create prints and what a merchant sends as
 * `verification.merchantId`. The internal primary key (a UUID) never changes and is what every
 * table, job and row refers to; the public id exists because the SDKs of this API family refuse a
 * merchantId longer than 10 characters.
 *
 * Shape: 10 digits, the first 1-9 (no leading zero for a spreadsheet to drop), the last a Luhn
 * check digit over the first nine, so a mistyped digit (or two adjacent digits swapped) is caught
 * before any lookup. Nine random digits give 900 million ids; uniqueness is the database's
 * (`merchants_public_id_key`), and merchant:create draws again on a collision.
 */
export const MERCHANT_PUBLIC_ID_PATTERN = '^[1-9][0-9]{9}$';
const SHAPE = new RegExp(MERCHANT_PUBLIC_ID_PATTERN);

/** The unique constraint a colliding id violates (SQLSTATE 23505). */
export const MERCHANT_PUBLIC_ID_CONSTRAINT = 'merchants_public_id_key';

/** The Luhn check digit of `payload` (digits only), as appended to it (isLuhnValid then holds for the whole). */
export function luhnCheckDigit(payload: string): number {
  let sum = 0;
  // From the right, every other digit starting with the rightmost payload digit is doubled.
  for (let i = payload.length - 1, double = true; i >= 0; i--, double = !double) {
    let d = payload.charCodeAt(i) - 48;
    if (double) {
      d *= 2;
      if (d > 9) d -= 9;
    }
    sum += d;
  }
  return (10 - (sum % 10)) % 10;
}

/** A fresh random public id (not yet known to be unused). */
export function newMerchantPublicId(): string {
  const payload = String(randomInt(100_000_000, 1_000_000_000)); // nine digits, first 1-9
  return payload + luhnCheckDigit(payload);
}

/** True when `id` has the shape of a public id and its check digit holds (the card number check, libs/card). */
export function isMerchantPublicId(id: string): boolean {
  return SHAPE.test(id) && isLuhnValid(id);
}

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** True when `id` has the shape of an internal merchant id (accepted from merchants integrated before public ids). */
export function isUuid(id: string): boolean {
  return UUID.test(id);
}
