import { AcquirerBook } from './acquirer.connector';
import { differencesOf, heldBy } from './reconcile';

const now = new Date('2026-11-27T12:00:00Z');
const recorded = (status: number, captured = 0, cancelled = 0) => ({ id: 'abc', merchantId: '1234567890', status, captured, cancelled });
const only = (sale: AcquirerBook) => ({ sale, others: [] });

describe('differencesOf', () => {
  it('agrees when the books match the record', () => {
    expect(differencesOf(recorded(8, 1000), only({ tid: 't', approved: true, captured: 1000, cancelled: 0 }), now, 0)).toEqual([]);
  });

  it('counts a charge the gateway voided whole (its outcome was unknown, recorded declined) as no charge', () => {
    const voidedWhole = { tid: 't', approved: true, captured: 1000, cancelled: 1000, amount: 1000 };
    expect(differencesOf(recorded(4), only(voidedWhole), now, 0)).toEqual([]);
  });

  it('still reports a declined sale the acquirer kept, even in part', () => {
    const kept = { tid: 't', approved: true, captured: 1000, cancelled: 400, amount: 1000 };
    expect(differencesOf(recorded(4), only(kept), now, 0).map((d) => d.check)).toEqual(['approved', 'captured', 'cancelled']);
  });

  it('reports every other charge under the order id that holds money as an orphan, with its tid and PaymentId', () => {
    const sale = { tid: 't1', saleRef: 'p1', approved: true, captured: 1000, cancelled: 0, amount: 1000 };
    const second = { tid: 't2', saleRef: 'p2', approved: true, captured: 0, cancelled: 0, amount: 1000 };
    const declined = { tid: 't3', saleRef: 'p3', approved: false, captured: 0, cancelled: 0, amount: 1000 };
    expect(differencesOf(recorded(8, 1000), { sale, others: [second, declined] }, now, 0)).toEqual([
      {
        transactionId: 'ABC',
        merchantId: '1234567890',
        check: 'orphan',
        gateway: 'not recorded',
        acquirer: 1000,
        tid: 't2',
        saleRef: 'p2',
      },
    ]);
  });

  it('reports a charge found for a sale recorded declined without a tid (its create landed late) as an orphan only', () => {
    const late = { tid: 't9', approved: true, captured: 2500, cancelled: 0, amount: 2500 };
    expect(differencesOf(recorded(4), { others: [late] }, now, 0)).toEqual([
      { transactionId: 'ABC', merchantId: '1234567890', check: 'orphan', gateway: 'not recorded', acquirer: 2500, tid: 't9' },
    ]);
  });

  it('an orphan voided whole holds nothing: no difference', () => {
    const voided = { tid: 't9', saleRef: 'p9', approved: true, captured: 2500, cancelled: 2500, amount: 2500 };
    expect(differencesOf(recorded(4), { others: [voided] }, now, 0)).toEqual([]);
  });

  it('heldBy: captured less voided, or before any capture the authorized amount less voided', () => {
    expect(heldBy({ tid: '', approved: true, captured: 600, cancelled: 100, amount: 1000 })).toBe(500);
    expect(heldBy({ tid: '', approved: true, captured: 0, cancelled: 300, amount: 1000 })).toBe(700);
    expect(heldBy({ tid: '', approved: false, captured: 0, cancelled: 0, amount: 1000 })).toBe(0);
  });
});
