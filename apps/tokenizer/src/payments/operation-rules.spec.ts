import { DomainError } from '@app/contracts';
import type { TransactionRow } from '@app/persistence';
import { judge } from './operation-rules';

const row = (over: Partial<TransactionRow>): TransactionRow =>
  ({
    status: 3,
    amount: '10000',
    captured_amount: '0',
    cancelled_amount: '0',
    charged_back_amount: '0',
    pending_operation_id: null,
    ...over,
  }) as TransactionRow;

const refusal = (f: () => unknown): { kind: string; code: string; parameter?: string; message: string } => {
  try {
    f();
  } catch (e) {
    if (e instanceof DomainError) return { kind: e.kind, code: e.code, parameter: e.parameter, message: e.message };
    throw e;
  }
  throw new Error('expected a refusal');
};

describe('capture and cancel rules', () => {
  it.each([
    ['full capture of an authorization', row({}), undefined, { amount: 10000, status: 8, capturedAmount: 10000 }],
    ['partial capture of an authorization', row({}), 2500, { amount: 2500, status: 8, capturedAmount: 2500 }],
  ])('capture: %s', (_name, r, amount, expected) => {
    const j = judge('capture', r, amount);
    expect({ amount: j.amount, status: j.change.status, capturedAmount: j.change.capturedAmount }).toEqual(expected);
    expect(j.event).toBe('transaction.captured');
  });

  it.each([
    ['already captured', row({ status: 8, captured_amount: '10000' }), undefined, { kind: 'conflict', code: '036' }],
    [
      'captured, then partly cancelled',
      row({ status: 12, captured_amount: '10000', cancelled_amount: '10' }),
      undefined,
      { kind: 'conflict', code: '036' },
    ],
    ['an authorization partly cancelled', row({ status: 12, cancelled_amount: '300' }), undefined, { kind: 'conflict', code: '034' }],
    ['cancelled', row({ status: 6, cancelled_amount: '10000' }), undefined, { kind: 'conflict', code: '034' }],
    ['declined', row({ status: 4 }), undefined, { kind: 'conflict', code: '037' }],
    ['more than authorized', row({}), 10001, { kind: 'validation', code: '904', parameter: 'amount' }],
  ])('capture refused: %s', (_name, r, amount, expected) => {
    expect(refusal(() => judge('capture', r, amount))).toMatchObject(expected);
  });

  it.each([
    ['an authorization in full', row({}), undefined, { amount: 10000, status: 6, cancelledAmount: 10000 }],
    ['an authorization in part', row({}), 300, { amount: 300, status: 12, cancelledAmount: 300 }],
    [
      'a partial capture in full: against what was captured',
      row({ status: 8, captured_amount: '4000' }),
      undefined,
      { amount: 4000, status: 6, cancelledAmount: 4000 },
    ],
    [
      'the rest after earlier cancels',
      row({ status: 12, captured_amount: '10000', cancelled_amount: '9000' }),
      undefined,
      { amount: 1000, status: 6, cancelledAmount: 10000 },
    ],
    [
      'the rest after a chargeback: partly cancelled, not cancelled',
      row({ status: 8, captured_amount: '10000', charged_back_amount: '6000' }),
      undefined,
      { amount: 4000, status: 12, cancelledAmount: 4000 },
    ],
  ])('cancel: %s', (_name, r, amount, expected) => {
    const j = judge('cancel', r, amount);
    expect({ amount: j.amount, status: j.change.status, cancelledAmount: j.change.cancelledAmount }).toEqual(expected);
    expect(j.event).toBe('transaction.cancelled');
  });

  it.each([
    ['already cancelled', row({ status: 6, cancelled_amount: '10000' }), undefined, { kind: 'conflict', code: '034' }],
    ['still waiting', row({ status: 0 }), undefined, { kind: 'conflict', code: '037' }],
    ['declined', row({ status: 4 }), undefined, { kind: 'conflict', code: '037' }],
    [
      'nothing left after a chargeback',
      row({ status: 12, captured_amount: '10000', cancelled_amount: '4000', charged_back_amount: '6000' }),
      undefined,
      { kind: 'conflict', code: '037' },
    ],
    [
      'more than is left',
      row({ status: 12, captured_amount: '10000', cancelled_amount: '9000' }),
      1001,
      {
        kind: 'validation',
        code: '904',
        parameter: 'amount',
        message: 'amount must not exceed the 1000 cents that can still be cancelled.',
      },
    ],
    [
      'what a chargeback took back',
      row({ status: 8, captured_amount: '10000', charged_back_amount: '6000' }),
      4001,
      { kind: 'validation', code: '904', parameter: 'amount' },
    ],
  ])('cancel refused: %s', (_name, r, amount, expected) => {
    expect(refusal(() => judge('cancel', r, amount))).toMatchObject(expected);
  });
});
