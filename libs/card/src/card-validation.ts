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

function problem(code: ErrorCode, parameter: string, message: string): DomainErrorPayload {
  return { kind: 'validation', code, parameter, message };
}

/** One card field's problem, or null. Messages never quote the input (it could be a card number). */
export type CardFieldProblem = DomainErrorPayload | null;

export function checkCardNumber(pan: string): CardFieldProblem {
  if (!/^\d{12,19}$/.test(pan))
    return problem(
      ErrorCodes.InvalidCardNumber,
      'cardNumber',
      'The card number must be 12 to 19 digits, with no spaces or other characters.',
    );
  if (!isLuhnValid(pan)) return problem(ErrorCodes.InvalidCardNumber, 'cardNumber', 'The card number is not valid (check digit mismatch).');
  if (detectBrand(pan)) return null;
  const byPrefix = brandByPrefix(pan);
  return byPrefix
    ? problem(ErrorCodes.InvalidCardNumber, 'cardNumber', `The card number has the wrong number of digits for a ${byPrefix} card.`)
    : problem(ErrorCodes.UnsupportedBrand, 'cardNumber', 'The card brand is not supported.');
}

/** The flag against the card's brand; a blank flag (plugins that don't know it) is absent. */
export function checkFlag(flag: string | undefined, pan: string): CardFieldProblem {
  if (flag === undefined || flag.trim() === '') return null;
  const flagged = normalizeFlag(flag);
  if (!flagged) return problem(ErrorCodes.InvalidField, 'flag', 'The flag is not a known card brand.');
  const brand = detectBrand(pan);
  if (brand && flagged !== brand)
    return problem(ErrorCodes.FlagMismatch, 'flag', `The flag is ${flagged} but the card number is a ${brand} card.`);
  return null;
}

export function checkExpiry(date: string, now: Date = new Date()): CardFieldProblem {
  const expiry = parseExpiry(date);
  if (!expiry)
    return problem(ErrorCodes.InvalidField, 'cardExpirationDate', 'The expiration date must be YYYYMM, with a month from 01 to 12.');
  if (isExpired(expiry, now)) return problem(ErrorCodes.CardExpired, 'cardExpirationDate', 'The card is expired.');
  return null;
}

export function checkHolder(holder: string | undefined): CardFieldProblem {
  if (holder === undefined) return problem(ErrorCodes.MissingField, 'cardHolder', 'The card holder name is required.');
  const trimmed = holder.trim();
  // Control characters would forge lines in logs and break the holder's echo in responses.
  if (trimmed === '' || trimmed.length > HOLDER_MAX || /[\u0000-\u001f\u007f]/.test(trimmed)) {
    return problem(ErrorCodes.InvalidField, 'cardHolder', `The card holder name must be 1 to ${HOLDER_MAX} printable characters.`);
  }
  return null;
}

export function checkSecurityCode(code: string | undefined): CardFieldProblem {
  if (code !== undefined && !/^\d{3,4}$/.test(code))
    return problem(ErrorCodes.InvalidSecurityCode, 'cardSecurityCode', 'The security code must be 3 or 4 digits.');
  return null;
}

/**
 * The card rules shared by the API (to reject early, before anything is sealed or queued) and the
 * tokenizer (which trusts no caller). The first problem wins.
 */
export function validateCard(input: CardInput, now: Date = new Date()): CardValidationResult {
  const pan = input.cardNumber;
  const first =
    checkCardNumber(pan) ??
    checkFlag(input.flag, pan) ??
    checkExpiry(input.cardExpirationDate, now) ??
    checkHolder(input.cardHolder) ??
    checkSecurityCode(input.cardSecurityCode);
  if (first) return { ok: false, error: first };
  const expiry = parseExpiry(input.cardExpirationDate)!;
  const card: ValidCard = { pan, holder: input.cardHolder!.trim(), expYear: expiry.year, expMonth: expiry.month, brand: detectBrand(pan)! };
  if (input.cardSecurityCode !== undefined) card.securityCode = input.cardSecurityCode;
  return { ok: true, card };
}
