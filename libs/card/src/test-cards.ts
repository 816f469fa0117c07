import { Brand } from './brand';
import { isLuhnValid } from './luhn';

/**
 * One well-known Luhn-valid test number per brand. The sandbox acquirer decides by the last digit
 * (docs/merchants/sandbox.md), so these do not all approve: use `withLastDigit` to pick an outcome.
 */
export const TEST_CARDS: Readonly<Record<Brand, string>> = {
  visa: '4111111111111111',
  mastercard: '5555555555554444',
  amex: '378282246310005',
  elo: '6362970000457013',
  diners: '30569309025904',
  discover: '6011111111111117',
  jcb: '3530111333300000',
  aura: '5078601870000127985',
  hipercard: '6062825624254001',
};

/**
 * The same number with its last digit forced to `digit`, made Luhn-valid again by changing the
 * digit before it. The first 6 and the length are kept, so the brand is too. Any single position
 * can fix the sum because Luhn maps each position's 10 values onto all 10 residues.
 */
export function withLastDigit(pan: string, digit: number): string {
  if (!/^\d{8,19}$/.test(pan)) throw new RangeError('withLastDigit needs a card number of 8 to 19 digits');
  if (!Number.isInteger(digit) || digit < 0 || digit > 9) throw new RangeError('withLastDigit needs a digit from 0 to 9');
  const head = pan.slice(0, -2);
  for (let fix = 0; fix <= 9; fix++) {
    const candidate = `${head}${fix}${digit}`;
    if (isLuhnValid(candidate)) return candidate;
  }
  throw new Error('unreachable: some digit always satisfies Luhn');
}
