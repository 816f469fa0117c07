import fc from 'fast-check';
import { DomainError } from '@app/contracts';
import { validated } from './validate';
import { Bool, Int, Text } from './wire-fields';

class Sample {
  @Int({ required: true })
  amount!: number;

  @Int({ min: 1, max: 12 })
  numberOfPayments?: number;

  @Bool()
  fraud?: boolean;

  @Text({ max: 3 })
  currency?: string;
}

function errorOf(body: Record<string, unknown>): DomainError {
  try {
    validated(Sample, { amount: 1, ...body }, 'payment');
  } catch (e) {
    return e as DomainError;
  }
  throw new Error('expected a DomainError');
}

describe('wire fields (liberal scalars as class-validator constraints)', () => {
  it('reads an integer the same from a JSON number and from its digits', () => {
    fc.assert(
      fc.property(fc.integer({ min: 0, max: Number.MAX_SAFE_INTEGER }), (n) => {
        expect(() => validated(Sample, { amount: n })).not.toThrow();
        expect(() => validated(Sample, { amount: String(n) })).not.toThrow();
      }),
    );
  });

  it('rejects any amount with a decimal point, naming the field', () => {
    fc.assert(
      fc.property(fc.integer({ min: 0, max: 1e9 }), fc.integer({ min: 1, max: 99 }), (whole, cents) => {
        const text = `${whole}.${String(cents).padStart(2, '0')}`;
        for (const v of [text, Number(text)]) {
          if (Number.isInteger(v)) continue;
          const e = errorOf({ amount: v });
          expect(e).toBeInstanceOf(DomainError);
          expect([e.code, e.parameter]).toEqual(['904', 'payment.amount']);
        }
      }),
    );
  });

  it.each([['1e3'], ['0x10'], [' 12'], ['12 '], ['+5'], [true], [[1]], [{}], [2 ** 53], ['99999999999999999']])(
    'rejects %p as an integer',
    (v) => {
      const e = errorOf({ numberOfPayments: v });
      expect([e.code, e.parameter]).toEqual(['904', 'payment.numberOfPayments']);
    },
  );

  it('enforces bounds with a sentence naming them', () => {
    expect(errorOf({ numberOfPayments: 13 }).message).toBe('payment.numberOfPayments must be from 1 to 12.');
  });

  it('reads booleans from both forms and nothing else', () => {
    for (const v of [true, 'true', false, 'false', undefined, null, ''])
      expect(() => validated(Sample, { amount: 1, fraud: v })).not.toThrow();
    fc.assert(
      fc.property(
        fc.string().filter((s) => s !== 'true' && s !== 'false' && s !== ''),
        (s) => {
          expect(errorOf({ fraud: s }).parameter).toBe('payment.fraud');
        },
      ),
    );
  });

  it('treats null and "" as absent, and says when a required field is missing', () => {
    for (const amount of [undefined, null, '']) {
      const e = errorOf({ amount });
      expect([e.code, e.parameter, e.message]).toEqual(['903', 'payment.amount', 'payment.amount is required.']);
    }
  });

  it('lists every problem at once, the first as the headline', () => {
    const e = errorOf({ amount: 'x', fraud: 'yes', currency: 'ABCD' });
    expect(e.problems.map((p) => p.parameter)).toEqual(['payment.amount', 'payment.fraud', 'payment.currency']);
    expect(e.message).toBe('payment.amount must be a whole number (integer cents for amounts). (and 2 more problems)');
  });
});
