import fc from 'fast-check';
import { bin6, last4, maskPan } from './mask';

describe('maskPan', () => {
  it.each([
    ['4111111111111111', '411111******1111'],
    ['5078601870000127985', '507860*********7985'],
    ['378282246310005', '37828******0005'],
    ['30569309025904', '3056******5904'],
    ['4222222222222', '422******2222'],
    ['123456789012', '12******9012'],
  ])('%s → %s', (pan, masked) => {
    expect(maskPan(pan)).toBe(masked);
  });

  it('shows at most the first 6 and last 4 digits, and hides at least 6 (or all of a shorter string)', () => {
    fc.assert(
      fc.property(fc.string({ unit: fc.constantFrom(...'0123456789'), maxLength: 25 }), (pan) => {
        const masked = maskPan(pan);
        expect(masked).toHaveLength(pan.length);
        let shown = 0;
        for (let i = 0; i < pan.length; i++) {
          if (masked[i] === '*') continue;
          shown++;
          expect(masked[i]).toBe(pan[i]);
          expect(i < 6 || i >= pan.length - 4).toBe(true);
        }
        expect(shown).toBeLessThanOrEqual(10);
        expect(pan.length - shown).toBeGreaterThanOrEqual(Math.min(6, pan.length));
      }),
    );
  });
});

describe('bin6 / last4', () => {
  it('cut the BIN and the last four', () => {
    expect(bin6('4111111111111111')).toBe('411111');
    expect(last4('4111111111111234')).toBe('1234');
  });
});
