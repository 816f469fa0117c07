import fc from 'fast-check';
import { BRANDS, detectBrand } from './brand';
import { isLuhnValid } from './luhn';
import { TEST_CARDS, withLastDigit } from './test-cards';

describe('TEST_CARDS', () => {
  it.each(BRANDS)('has a Luhn-valid %s number detected as that brand', (brand) => {
    expect(isLuhnValid(TEST_CARDS[brand])).toBe(true);
    expect(detectBrand(TEST_CARDS[brand])).toBe(brand);
  });
});

describe('withLastDigit', () => {
  it('keeps brand, length and BIN, ends in the digit and stays Luhn-valid', () => {
    fc.assert(
      fc.property(fc.constantFrom(...BRANDS), fc.integer({ min: 0, max: 9 }), (brand, d) => {
        const pan = withLastDigit(TEST_CARDS[brand], d);
        expect(pan.endsWith(String(d))).toBe(true);
        expect(pan).toHaveLength(TEST_CARDS[brand].length);
        expect(pan.slice(0, 6)).toBe(TEST_CARDS[brand].slice(0, 6));
        expect(isLuhnValid(pan)).toBe(true);
        expect(detectBrand(pan)).toBe(brand);
      }),
    );
  });

  it('returns the number unchanged when it already ends in that digit', () => {
    expect(withLastDigit('4111111111111111', 1)).toBe('4111111111111111');
  });

  it.each<[string, number]>([
    ['4111', 1],
    ['4111x11111111111', 1],
    ['4111111111111111', 10],
    ['4111111111111111', 1.5],
  ])('refuses %p, %p', (pan, d) => {
    expect(() => withLastDigit(pan, d)).toThrow(RangeError);
  });
});
