import fc from 'fast-check';
import { DomainError } from '@app/contracts';
import { optionalBool, optionalInt, requiredInt, requiredString } from './scalars';

function errorOf(fn: () => unknown): DomainError {
  try {
    fn();
  } catch (e) {
    return e as DomainError;
  }
  throw new Error('expected a DomainError');
}

describe('liberal scalars', () => {
  it('reads an integer the same from a JSON number and from its digits', () => {
    fc.assert(
      fc.property(fc.integer({ min: 0, max: Number.MAX_SAFE_INTEGER }), (n) => {
        expect(requiredInt({ amount: n }, 'amount', 'payment.amount')).toBe(n);
        expect(requiredInt({ amount: String(n) }, 'amount', 'payment.amount')).toBe(n);
      }),
    );
  });

  it('rejects any amount with a decimal point, naming the field', () => {
    fc.assert(
      fc.property(fc.integer({ min: 0, max: 1e9 }), fc.integer({ min: 1, max: 99 }), (whole, cents) => {
        const text = `${whole}.${String(cents).padStart(2, '0')}`;
        for (const v of [text, Number(text)]) {
          if (Number.isInteger(v)) continue;
          const e = errorOf(() => requiredInt({ amount: v }, 'amount', 'payment.amount'));
          expect(e).toBeInstanceOf(DomainError);
          expect(e.parameter).toBe('payment.amount');
          expect(e.code).toBe('904');
        }
      }),
    );
  });

  it.each([['1e3'], ['0x10'], [' 12'], ['12 '], ['+5'], [''], [true], [[1]], [{}]])('rejects %p as an integer', (v) => {
    const fn = () => requiredInt({ n: v as never }, 'n', 'payment.numberOfPayments');
    const e = errorOf(fn);
    expect(e.parameter).toBe('payment.numberOfPayments');
    expect(['903', '904']).toContain(e.code);
  });

  it('enforces bounds with a sentence naming them', () => {
    const e = errorOf(() => optionalInt({ n: 13 }, 'n', 'payment.numberOfPayments', 1, 12));
    expect(e.message).toBe('payment.numberOfPayments must be from 1 to 12.');
  });

  it('reads booleans from both forms and nothing else', () => {
    expect(optionalBool({ f: true }, 'f', 'fraud')).toBe(true);
    expect(optionalBool({ f: 'true' }, 'f', 'fraud')).toBe(true);
    expect(optionalBool({ f: false }, 'f', 'fraud')).toBe(false);
    expect(optionalBool({ f: 'false' }, 'f', 'fraud')).toBe(false);
    expect(optionalBool({}, 'f', 'fraud')).toBeUndefined();
    fc.assert(
      fc.property(fc.string().filter((s) => s !== 'true' && s !== 'false' && s !== ''), (s) => {
        expect(errorOf(() => optionalBool({ f: s }, 'f', 'fraud')).parameter).toBe('fraud');
      }),
    );
  });

  it('reads a string from a string or a number, and says when it is missing', () => {
    expect(requiredString({ c: 986 }, 'c', 'payment.currency')).toBe('986');
    expect(requiredString({ c: '986' }, 'c', 'payment.currency')).toBe('986');
    const e = errorOf(() => requiredString({}, 'c', 'payment.currency'));
    expect([e.code, e.parameter, e.message]).toEqual(['903', 'payment.currency', 'payment.currency is required.']);
  });
});
