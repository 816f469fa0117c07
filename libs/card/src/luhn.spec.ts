import fc from 'fast-check';
import { isLuhnValid } from './luhn';

/** Textbook check digit, written independently of the code under test. */
function referenceCheckDigit(body: string): string {
  const sum = [...body].reverse().reduce((acc, ch, i) => {
    const d = Number(ch) * (i % 2 === 0 ? 2 : 1);
    return acc + Math.floor(d / 10) + (d % 10);
  }, 0);
  return String((10 - (sum % 10)) % 10);
}

const body = fc.string({ unit: fc.constantFrom(...'0123456789'), minLength: 11, maxLength: 18 });

describe('isLuhnValid', () => {
  it.each(['4111111111111111', '378282246310005', '30569309025904', '5078601870000127985'])('accepts %s', (pan) => {
    expect(isLuhnValid(pan)).toBe(true);
  });

  it.each(['4111111111111112', '378282246310006', '', '7', '4111 1111 1111 1111', '411111111111111a', '-4111111111111111'])(
    'rejects %p',
    (s) => expect(isLuhnValid(s)).toBe(false),
  );

  it('accepts any body completed with the reference check digit', () => {
    fc.assert(fc.property(body, (b) => expect(isLuhnValid(b + referenceCheckDigit(b))).toBe(true)));
  });

  it('rejects every single-digit change of a valid number', () => {
    fc.assert(
      fc.property(body, fc.nat(), fc.integer({ min: 1, max: 9 }), (b, at, delta) => {
        const valid = b + referenceCheckDigit(b);
        const i = at % valid.length;
        const changed = valid.slice(0, i) + String((Number(valid[i]) + delta) % 10) + valid.slice(i + 1);
        expect(isLuhnValid(changed)).toBe(false);
      }),
    );
  });
});
