import { DomainErrorPayload, ErrorCode, ErrorCodes } from '@app/contracts';
import { Brand, brandByPrefix, detectBrand, normalizeFlag } from './brand';
import { isExpired, parseExpiry } from './expiry';
import { isLuhnValid } from './luhn';

export interface CardInput {
  cardNumber: string;
  cardHolder?: string;
  cardExpirationDate: string;
  cardSecurityCode?: string;
  flag?: string;
}

export interface ValidCard {
  pan: string;
  holder: string;
  expYear: number;
  expMonth: number;
  brand: Brand;
  securityCode?: string;
}

export type CardValidationResult = { ok: true; card: ValidCard } | { ok: false; error: DomainErrorPayload };

const HOLDER_MAX = 64;

function fail(code: ErrorCode, parameter: string, message: string): CardValidationResult {
  return { ok: false, error: { kind: 'validation', code, parameter, message } };
}

/**
 * The card rules shared by the API (to reject early, before anything is sealed or queued) and the
 * tokenizer (which trusts no caller). The first problem wins. Messages never quote the input:
 * they end up in logs and error bodies, and a misplaced field could hold a card number.
 */
export function validateCard(input: CardInput, now: Date = new Date()): CardValidationResult {
  const pan = input.cardNumber;
  if (!/^\d{12,19}$/.test(pan)) {
    return fail(ErrorCodes.InvalidCardNumber, 'cardNumber', 'The card number must be 12 to 19 digits, with no spaces or other characters.');
  }
  if (!isLuhnValid(pan)) return fail(ErrorCodes.InvalidCardNumber, 'cardNumber', 'The card number is not valid (check digit mismatch).');

  const brand = detectBrand(pan);
  if (!brand) {
    const byPrefix = brandByPrefix(pan);
    return byPrefix
      ? fail(ErrorCodes.InvalidCardNumber, 'cardNumber', `The card number has the wrong number of digits for a ${byPrefix} card.`)
      : fail(ErrorCodes.UnsupportedBrand, 'cardNumber', 'The card brand is not supported.');
  }

  // A blank flag is what plugins send when they don't know the brand: treat it as absent.
  if (input.flag !== undefined && input.flag.trim() !== '') {
    const flagged = normalizeFlag(input.flag);
    if (!flagged) return fail(ErrorCodes.InvalidField, 'flag', 'The flag is not a known card brand.');
    if (flagged !== brand) return fail(ErrorCodes.FlagMismatch, 'flag', `The flag is ${flagged} but the card number is a ${brand} card.`);
  }

  const expiry = parseExpiry(input.cardExpirationDate);
  if (!expiry) return fail(ErrorCodes.InvalidField, 'cardExpirationDate', 'The expiration date must be YYYYMM, with a month from 01 to 12.');
  if (isExpired(expiry, now)) return fail(ErrorCodes.CardExpired, 'cardExpirationDate', 'The card is expired.');

  if (input.cardHolder === undefined) return fail(ErrorCodes.MissingField, 'cardHolder', 'The card holder name is required.');
  const holder = input.cardHolder.trim();
  // Control characters would forge lines in logs and break the holder's echo in responses.
  if (holder === '' || holder.length > HOLDER_MAX || /[\u0000-\u001f\u007f]/.test(holder)) {
    return fail(ErrorCodes.InvalidField, 'cardHolder', `The card holder name must be 1 to ${HOLDER_MAX} printable characters.`);
  }

  const code = input.cardSecurityCode;
  if (code !== undefined && !/^\d{3,4}$/.test(code)) {
    return fail(ErrorCodes.InvalidSecurityCode, 'cardSecurityCode', 'The security code must be 3 or 4 digits.');
  }

  const card: ValidCard = { pan, holder, expYear: expiry.year, expMonth: expiry.month, brand };
  if (code !== undefined) card.securityCode = code;
  return { ok: true, card };
}
