import { Billing, ClearCard, DomainError, ErrorCodes } from '@app/contracts';
import { validateCard } from '@app/card';
import { JsonObject, optionalObject, optionalString, requiredString } from '../envelope/scalars';

export const TOKEN_ADD_OPERATIONS = ['tokencard', 'tokenCard'] as const;
export const TOKEN_RETRIEVE_OPERATIONS = ['retrieve-token'] as const;

export interface TokenAddInput {
  card: ClearCard;
  flag?: string;
  billing?: Billing;
}

const DIGITS = /^\d+$/;
const TOKEN = /^[0-9a-fA-F]{64}$/;

/**
 * WIRE.md 2. The card is fully validated here too (Luhn, brand, expiry), so a bad card never
 * reaches the queue, even sealed; the tokenizer checks again because it trusts no caller.
 */
export function parseTokenAdd(op: JsonObject): TokenAddInput {
  const card: ClearCard = {
    cardNumber: requiredString(op, 'cardNumber', 'cardNumber', { max: 19, pattern: DIGITS, patternHint: 'must contain digits only' }),
    cardHolder: requiredString(op, 'cardHolder', 'cardHolder', { max: 64 }),
    cardExpirationDate: requiredString(op, 'cardExpirationDate', 'cardExpirationDate', { pattern: /^\d{6}$/, patternHint: 'must be 6 digits in the form YYYYMM' }),
    cardSecurityCode: optionalString(op, 'cardSecurityCode', 'cardSecurityCode', { pattern: /^\d{3,4}$/, patternHint: 'must be 3 or 4 digits' }),
  };
  const flag = optionalString(op, 'flag', 'flag', { max: 32 });
  const checked = validateCard({ ...card, flag });
  if (!checked.ok) throw DomainError.fromPayload(checked.error);
  return { card, flag, billing: parseBilling(op) };
}

export function parseTokenRetrieve(op: JsonObject): string {
  const key = op.token !== undefined ? 'token' : 'tokenCard';
  const token = requiredString(op, key, key, { max: 64 });
  // A malformed token can't exist: answer as for an unknown one, without a round trip.
  if (!TOKEN.test(token)) throw new DomainError('not_found', ErrorCodes.TokenNotFound, 'Token not found.', key);
  return token.toLowerCase();
}

const BILLING_FIELDS: { key: keyof Billing; max: number; pattern?: RegExp; hint?: string }[] = [
  { key: 'customerIdentity', max: 32 },
  { key: 'name', max: 128 },
  { key: 'address', max: 256 },
  { key: 'address2', max: 256 },
  { key: 'city', max: 128 },
  { key: 'state', max: 2, pattern: /^[A-Za-z]{2}$/, hint: 'must be a two-letter state code' },
  { key: 'postalCode', max: 16, pattern: /^\d+$/, hint: 'must contain digits only' },
  { key: 'country', max: 3, pattern: /^[A-Za-z]{2,3}$/, hint: 'must be a two- or three-letter country code' },
  { key: 'phone', max: 20, pattern: /^\d+$/, hint: 'must contain digits only' },
  { key: 'email', max: 254, pattern: /^[^\s@]+@[^\s@]+\.[^\s@]+$/, hint: 'must be an e-mail address' },
];

export function parseBilling(op: JsonObject): Billing | undefined {
  const raw = optionalObject(op, 'billing', 'billing');
  if (!raw) return undefined;
  const billing: Billing = {};
  for (const f of BILLING_FIELDS) {
    const v = optionalString(raw, f.key, `billing.${f.key}`, { max: f.max, pattern: f.pattern, patternHint: f.hint });
    if (v !== undefined) billing[f.key] = v;
  }
  return billing;
}
