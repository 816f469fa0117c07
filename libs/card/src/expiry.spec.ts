import fc from 'fast-check';
import { isExpired, parseExpiry } from './expiry';

describe('parseExpiry', () => {
  it.each([
    ['203012', { year: 2030, month: 12 }],
    ['200001', { year: 2000, month: 1 }],
    ['209909', { year: 2099, month: 9 }],
  ])('%s', (s, expected) => expect(parseExpiry(s)).toEqual(expected));

  it.each(['203000', '203013', '199912', '210001', '20301', '2030012', '12/30', '2030-12', ' 203012', '２０３０１２', ''])(
    'rejects %p',
    (s) => {
      expect(parseExpiry(s)).toBeNull();
    },
  );
});

describe('isExpired', () => {
  it('is valid through the last millisecond of the expiry month, UTC', () => {
    expect(isExpired({ year: 2030, month: 12 }, new Date('2030-12-31T23:59:59.999Z'))).toBe(false);
    expect(isExpired({ year: 2030, month: 12 }, new Date('2031-01-01T00:00:00.000Z'))).toBe(true);
    expect(isExpired({ year: 2028, month: 2 }, new Date('2028-02-29T12:00:00Z'))).toBe(false);
    expect(isExpired({ year: 2028, month: 2 }, new Date('2028-03-01T00:00:00Z'))).toBe(true);
  });

  it('flips exactly at the first instant of the following month', () => {
    fc.assert(
      fc.property(fc.integer({ min: 2000, max: 2099 }), fc.integer({ min: 1, max: 12 }), (year, month) => {
        const nextMonth = Date.UTC(year, month, 1);
        expect(isExpired({ year, month }, new Date(nextMonth - 1))).toBe(false);
        expect(isExpired({ year, month }, new Date(nextMonth))).toBe(true);
        expect(isExpired({ year, month }, new Date(Date.UTC(year, month - 1, 1)))).toBe(false);
      }),
    );
  });
});
