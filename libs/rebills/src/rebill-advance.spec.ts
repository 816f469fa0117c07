import { RebillPeriods, TransactionStatus } from '@app/contracts';
import { advanceResults, decideAdvance, suspends, suspensionEvent, suspensionsToTell } from './rebill-advance';
import type { AdvanceRow, CycleRow } from '@app/persistence';

const ID = '0b7c2a52-6f1e-4c36-9a57-3f0c5d1e2a10';
const TX = '7d1e0c2b-3a4f-4e5d-8c6b-9a0f1e2d3c4b';

/** A monthly rebill of three cycles from 2026-01-10, retried 1 and 3 days after a soft decline, its charge of `cycle` decided. */
const row = (over: Partial<AdvanceRow> = {}): AdvanceRow => ({
  id: ID,
  merchant_id: '11111111-2222-4333-8444-555555555555',
  reference: 'order-1',
  state: 'active',
  period: RebillPeriods.Monthly,
  frequency: 1,
  date_start: '2026-01-10',
  date_end: '2026-03-10',
  retry_days: [1, 3],
  due_shift_days: 0,
  acquirer: 1,
  instalments: 1,
  currency: 'BRL',
  amount: '1000',
  token_card: 'tok',
  masked_card: '411111******1111',
  brand: 'visa',
  card_expires: '2027-12-31',
  details: { method: 1 },
  url_return: 'https://merchant.example/hook',
  next_cycle: 1,
  next_attempt: 0,
  next_due_at: null,
  open_transaction_id: TX,
  suspended_reason: null,
  version: 3,
  created_at: new Date('2026-01-01T00:00:00Z'),
  updated_at: new Date('2026-01-10T00:00:00Z'),
  t_status: TransactionStatus.Approved,
  t_error_code: '',
  t_return_code: '00',
  c_cycle: 1,
  c_attempt: 0,
  c_opened_at: new Date('2026-01-10T00:00:00Z'),
  ...over,
});

describe('decideAdvance: where a rebill moves on to from its decided charge', () => {
  it('an approved charge schedules the next cycle on its date', () => {
    const u = decideAdvance(row());
    expect(u).toMatchObject({ state: 'active', cycle: 2, attempt: 0, reason: null });
    expect(u.due).toEqual(new Date('2026-02-10T00:00:00Z'));
    expect(suspends(u)).toBe(false);
  });

  it('the last cycle approved completes the rebill', () => {
    expect(decideAdvance(row({ c_cycle: 3 }))).toMatchObject({ state: 'completed', cycle: 4, attempt: 0, due: null });
  });

  it('a soft decline is retried on its retry day', () => {
    const u = decideAdvance(row({ t_status: TransactionStatus.Unauthorized, t_error_code: '', t_return_code: '05' }));
    expect(u).toMatchObject({ state: 'active', cycle: 1, attempt: 1, reason: null });
    expect(u.due).toEqual(new Date('2026-01-11T00:00:00Z'));
  });

  it('a hard decline suspends it, and says why', () => {
    const u = decideAdvance(row({ t_status: TransactionStatus.Unauthorized, t_return_code: '54' }));
    expect(u).toMatchObject({ state: 'suspended', cycle: 1, attempt: 0, due: null, reason: 'hard_decline' });
    expect(suspends(u)).toBe(true);
  });

  it('a rebill no longer active keeps where it stands (a cancel came first)', () => {
    const u = decideAdvance(row({ state: 'cancelled', next_cycle: 2, next_attempt: 1, suspended_reason: null }));
    expect(u).toMatchObject({ state: 'cancelled', cycle: 2, attempt: 1, due: null, reason: null });
    expect(suspends(u)).toBe(false);
  });
});

describe('the suspension event and the answers', () => {
  const hard = decideAdvance(row({ t_status: TransactionStatus.Unauthorized, t_return_code: '54' }));
  const approved = decideAdvance(row({ id: '22222222-3333-4444-8555-666666666666' }));

  it('only suspensions of rebills with a listener are told', () => {
    const silent = decideAdvance(row({ t_status: TransactionStatus.Unauthorized, t_return_code: '54', url_return: null }));
    expect(suspensionsToTell([hard, approved, silent])).toEqual([hard]);
  });

  it('the event shows the rebill as suspended, one version on, with its cycles', () => {
    const cycle: CycleRow = {
      rebill_id: ID,
      cycle: 1,
      attempt: 0,
      transaction_id: TX,
      cycle_date: '2026-01-10',
      merchant_initiated: true,
      status: TransactionStatus.Unauthorized,
      error_code: '',
      processor: { tid: 't1', returnCode: '54', returnMessage: 'EXPIRED CARD' },
      amount: '1000',
      created_at: new Date('2026-01-10T00:00:00Z'),
    };
    const e = suspensionEvent(hard, [cycle]);
    expect(e).toMatchObject({
      transactionId: ID.toUpperCase(),
      merchantId: hard.r.merchant_id,
      statusVersion: 4,
      status: TransactionStatus.Unauthorized,
      capturedAmount: 0,
      cancelledAmount: 0,
      urlReturn: 'https://merchant.example/hook',
    });
    expect(e.view?.rebill).toMatchObject({ state: 'suspended', suspendedReason: 'hard_decline', nextDate: undefined, cycles: 1 });
    expect(e.view?.payments).toEqual([expect.objectContaining({ ticket: TX.toUpperCase(), returnCode: '54' })]);
  });

  it('each advance answers its new state, and its reason when it suspended the rebill', () => {
    const results = advanceResults([hard, approved]);
    expect(results.get(ID)).toEqual({ rebillId: ID, transactionId: TX, state: 'suspended', suspended: 'hard_decline' });
    expect(results.get(approved.r.id)).toEqual({ rebillId: approved.r.id, transactionId: TX, state: 'active', suspended: undefined });
  });
});
