import { checkCardNumber, checkExpiry, checkFlag, checkHolder, checkSecurityCode, TEST_CARDS } from '@app/card';
import { DomainErrorPayload } from '@app/contracts';
import { Check, FieldIssue, invalid, Presence, textOf } from './wire-fields';

/**
 * The card fields, checked through libs/card (Luhn, brand, expiry, holder, security code) with
 * their own wire codes (910–914). In a sale they are required unless a token is sent instead, and
 * must then be absent.
 */
export const TOKEN_KEYS = ['tokenCard', 'cardToken'] as const;

export function tokenKeyOf(owner: Record<string, unknown>): (typeof TOKEN_KEYS)[number] | undefined {
  return TOKEN_KEYS.find((k) => owner[k] !== undefined && owner[k] !== null && owner[k] !== '');
}

export interface CardFieldOptions {
  /** A sale's payment: the card may be replaced by a token. */
  orToken?: boolean;
}

const issueOf = (p: DomainErrorPayload | null): FieldIssue | null => (p ? { code: p.code, text: p.message } : null);

function cardField(
  check: (text: string, owner: Record<string, unknown>) => FieldIssue | null,
  opts: CardFieldOptions,
  doc: Presence & { pattern?: string; max?: number },
): PropertyDecorator {
  const presence: Presence = { ...doc, required: opts.orToken ? (owner) => tokenKeyOf(owner) === undefined : true };
  return Check(
    { type: 'string', pattern: doc.pattern, maxLength: doc.max, description: doc.description },
    (v, owner) => {
      const token = opts.orToken ? tokenKeyOf(owner) : undefined;
      if (token) return invalid(`must be absent when ${token} is given beside it`);
      const text = textOf(v);
      return text === undefined ? invalid('must be a string') : check(text, owner);
    },
    presence,
  );
}

export const CardNumber = (opts: CardFieldOptions = {}) =>
  cardField((pan) => issueOf(checkCardNumber(pan)), opts, {
    pattern: '^\\d{12,19}$',
    max: 19,
    example: TEST_CARDS.visa,
    description: '12 to 19 digits, Luhn-valid, of a supported brand (910, 914).',
  });

export const CardHolder = (opts: CardFieldOptions = {}) =>
  cardField((h) => issueOf(checkHolder(h)), opts, { max: 64, example: 'MARIA SILVA' });

export const CardExpirationDate = (opts: CardFieldOptions = {}) =>
  cardField((d) => issueOf(checkExpiry(d)), opts, {
    pattern: '^\\d{6}$',
    example: '203012',
    description: 'YYYYMM; an expired card is refused (911).',
  });

/** Optional everywhere; with a token it may still be sent (it is never stored). */
export const CardSecurityCode = () =>
  Check(
    { type: 'string', pattern: '^\\d{3,4}$', description: '3 or 4 digits (913); used for this authorization only, never stored.' },
    (v) => {
      const text = textOf(v);
      return text === undefined ? invalid('must be a string') : issueOf(checkSecurityCode(text));
    },
    { example: '123' },
  );

/** The brand the merchant expects; checked against the card number's brand (912). */
export const Flag = () =>
  Check(
    {
      type: 'string',
      maxLength: 32,
      description: 'visa, mastercard, amex, elo, diners, discover, jcb, aura or hipercard; blank is the same as absent.',
    },
    (v, owner) => {
      const text = textOf(v);
      if (text === undefined) return invalid('must be a string');
      if (text.length > 32) return invalid('must be at most 32 characters');
      const pan = textOf(owner.cardNumber);
      return issueOf(checkFlag(text, pan ?? ''));
    },
    { example: 'visa' },
  );
