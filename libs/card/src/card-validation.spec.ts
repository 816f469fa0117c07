import fc from 'fast-check';
import { ErrorCodes } from '@app/contracts';
import { BRANDS } from './brand';
import { CardInput, validateCard } from './card-validation';
import { TEST_CARDS, withLastDigit } from './test-cards';

const NOW = new Date('2026-11-22T12:00:00Z');
const good: CardInput = { cardNumber: TEST_CARDS.visa, cardHolder: 'MARIA SILVA', cardExpirationDate: '203012', cardSecurityCode: '123' };

function errorOf(input: Partial<CardInput>) {
  const r = validateCard({ ...good, ...input }, NOW);
  if (r.ok) throw new Error('expected a validation error');
  return r.error;
}

describe('validateCard', () => {
  it.each(BRANDS)('accepts the %s test card and names its brand', (brand) => {
    const r = validateCard({ ...good, cardNumber: TEST_CARDS[brand], flag: brand }, NOW);
    expect(r).toEqual({
      ok: true,
      card: { pan: TEST_CARDS[brand], holder: 'MARIA SILVA', expYear: 2030, expMonth: 12, brand, securityCode: '123' },
    });
  });

  it('leaves the security code out when none was sent, and trims the holder', () => {
    const r = validateCard({ ...good, cardHolder: '  ANA  ', cardSecurityCode: undefined }, NOW);
    expect(r.ok && r.card).toEqual({ pan: good.cardNumber, holder: 'ANA', expYear: 2030, expMonth: 12, brand: 'visa' });
  });

  it('accepts a card in its expiry month and a blank flag', () => {
    expect(validateCard({ ...good, cardExpirationDate: '202611', flag: ' ' }, NOW).ok).toBe(true);
  });

  it.each<[string, Partial<CardInput>, string, string]>([
    ['too short', { cardNumber: '41111111111' }, ErrorCodes.InvalidCardNumber, 'cardNumber'],
    ['too long', { cardNumber: '41111111111111111111' }, ErrorCodes.InvalidCardNumber, 'cardNumber'],
    ['spaces', { cardNumber: '4111 1111 1111 1111' }, ErrorCodes.InvalidCardNumber, 'cardNumber'],
    ['dashes', { cardNumber: '4111-1111-1111-1111' }, ErrorCodes.InvalidCardNumber, 'cardNumber'],
    ['Luhn', { cardNumber: '4111111111111112' }, ErrorCodes.InvalidCardNumber, 'cardNumber'],
    ['wrong length for amex', { cardNumber: withLastDigit('3782822463100050', 0) }, ErrorCodes.InvalidCardNumber, 'cardNumber'],
    ['unknown brand', { cardNumber: withLastDigit('9999999999999999', 0) }, ErrorCodes.UnsupportedBrand, 'cardNumber'],
    ['flag mismatch', { flag: 'mastercard' }, ErrorCodes.FlagMismatch, 'flag'],
    ['unknown flag', { flag: 'maestro' }, ErrorCodes.InvalidField, 'flag'],
    ['expired', { cardExpirationDate: '202610' }, ErrorCodes.CardExpired, 'cardExpirationDate'],
    ['month 13', { cardExpirationDate: '203013' }, ErrorCodes.InvalidField, 'cardExpirationDate'],
    ['MM/YY', { cardExpirationDate: '12/30' }, ErrorCodes.InvalidField, 'cardExpirationDate'],
    ['no holder', { cardHolder: undefined }, ErrorCodes.MissingField, 'cardHolder'],
    ['blank holder', { cardHolder: '   ' }, ErrorCodes.InvalidField, 'cardHolder'],
    ['holder over 64', { cardHolder: 'A'.repeat(65) }, ErrorCodes.InvalidField, 'cardHolder'],
    ['holder with a newline', { cardHolder: 'ANA\nFORGED LOG LINE' }, ErrorCodes.InvalidField, 'cardHolder'],
    ['2-digit code', { cardSecurityCode: '12' }, ErrorCodes.InvalidSecurityCode, 'cardSecurityCode'],
    ['5-digit code', { cardSecurityCode: '12345' }, ErrorCodes.InvalidSecurityCode, 'cardSecurityCode'],
    ['letters in code', { cardSecurityCode: '12a' }, ErrorCodes.InvalidSecurityCode, 'cardSecurityCode'],
  ])('rejects %s with code and field named', (_name, input, code, parameter) => {
    expect(errorOf(input)).toMatchObject({ kind: 'validation', code, parameter });
  });

  it('accepts a 64-character holder and a 4-digit code', () => {
    expect(validateCard({ ...good, cardHolder: 'A'.repeat(64), cardSecurityCode: '1234' }, NOW).ok).toBe(true);
  });

  it('never quotes the card number or security code in a message', () => {
    const digits = (min: number, max: number) => fc.string({ unit: fc.constantFrom(...'0123456789'), minLength: min, maxLength: max });
    fc.assert(
      fc.property(
        // Mostly numbers that pass Luhn and brand checks, so every later rule gets its turn.
        fc.oneof(
          fc.tuple(fc.constantFrom(...Object.values(TEST_CARDS)), fc.integer({ min: 0, max: 9 })).map(([p, d]) => withLastDigit(p, d)),
          digits(12, 19),
        ),
        fc.constantFrom('123', '0917', '083', '12345', 'abc'),
        fc.constantFrom('203012', '202001', '203013'),
        fc.constantFrom(undefined, 'visa', 'elo', 'nope'),
        fc.constantFrom('ANA', '', 'A'.repeat(65)),
        (pan, cvv, exp, flag, holder) => {
          const r = validateCard({ cardNumber: pan, cardSecurityCode: cvv, cardExpirationDate: exp, flag, cardHolder: holder }, NOW);
          if (r.ok) return;
          expect(r.error.message).not.toContain(pan);
          expect(r.error.message).not.toContain(pan.slice(-4));
          expect(r.error.message).not.toContain(cvv);
        },
      ),
    );
  });
});
