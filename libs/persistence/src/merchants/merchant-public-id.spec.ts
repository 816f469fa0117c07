import fc from 'fast-check';
import { isMerchantPublicId, luhnCheckDigit, newMerchantPublicId } from './merchant-public-id';

describe('merchant public id', () => {
  it('is 10 digits, the first 1-9, with a Luhn check digit', () => {
    for (let i = 0; i < 1000; i++) {
      const id = newMerchantPublicId();
      expect(id).toMatch(/^[1-9]\d{9}$/);
      expect(isMerchantPublicId(id)).toBe(true);
    }
  });

  it('computes the Luhn digit of known numbers', () => {
    // 7992739871 + 3 is the textbook example; 123456789 + 7.
    expect(luhnCheckDigit('7992739871')).toBe(3);
    expect(luhnCheckDigit('123456789')).toBe(7);
    expect(isMerchantPublicId('1234567897')).toBe(true);
    expect(isMerchantPublicId('1234567890')).toBe(false);
  });

  it('refuses other shapes', () => {
    for (const id of [
      '',
      '0234567897',
      '123456789',
      '12345678977',
      '123456789a',
      ' 1234567897',
      '1234567897 ',
      '00000000-0000-4000-8000-000000000000',
    ]) {
      expect(isMerchantPublicId(id)).toBe(false);
    }
  });

  it('property: a generated id passes, and any single changed digit fails', () => {
    fc.assert(
      fc.property(fc.integer({ min: 0, max: 9 }), fc.integer({ min: 1, max: 9 }), (position, delta) => {
        const id = newMerchantPublicId();
        expect(isMerchantPublicId(id)).toBe(true);
        const changed = (Number(id[position]) + delta) % 10;
        const typo = id.slice(0, position) + changed + id.slice(position + 1);
        expect(isMerchantPublicId(typo)).toBe(false);
      }),
      { numRuns: 2000 },
    );
  });

  it('property: any nine-digit payload with its check digit passes', () => {
    fc.assert(
      fc.property(fc.integer({ min: 100_000_000, max: 999_999_999 }), (n) => {
        const payload = String(n);
        expect(isMerchantPublicId(payload + luhnCheckDigit(payload))).toBe(true);
      }),
    );
  });
});
