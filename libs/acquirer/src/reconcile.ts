import type { AcquirerBook } from './acquirer.connector';

/** A transaction as the gateway recorded it, in the terms the acquirer's books use. */
export interface RecordedTransaction {
  id: string;
  merchantId: string;
  status: number;
  captured: number;
  cancelled: number;
  /** When the capture or cancel holding it claimed it, if one does. */
  heldSince?: Date;
}

export interface ReconcileDifference {
  transactionId: string;
  merchantId: string;
  check: 'approved' | 'captured' | 'cancelled' | 'held';
  gateway: number | boolean | string;
  acquirer: number | boolean | string;
}

/** The statuses whose authorization the acquirer approved and kept (WIRE 4.3). */
const APPROVED_STATUSES = new Set([3, 6, 8, 12]);

/**
 * Where the gateway's record and the acquirer's books disagree for one transaction. A capture or
 * cancel in flight may be in the books before the record: a transaction held for less than
 * `heldGraceMs` is not compared; one held longer is itself a difference (its worker is gone and
 * the reconciler has not settled it).
 */
export function differencesOf(
  t: RecordedTransaction,
  book: AcquirerBook | undefined,
  now: Date,
  heldGraceMs: number,
): ReconcileDifference[] {
  const out: ReconcileDifference[] = [];
  const diff = (
    check: ReconcileDifference['check'],
    gateway: ReconcileDifference['gateway'],
    acquirer: ReconcileDifference['acquirer'],
  ) => {
    if (gateway !== acquirer) out.push({ transactionId: t.id.toUpperCase(), merchantId: t.merchantId, check, gateway, acquirer });
  };
  if (t.heldSince) {
    if (now.getTime() - t.heldSince.getTime() > heldGraceMs) diff('held', `since ${t.heldSince.toISOString()}`, 'released');
    return out;
  }
  diff('approved', APPROVED_STATUSES.has(t.status), book?.approved ?? false);
  diff('captured', t.captured, book?.captured ?? 0);
  diff('cancelled', t.cancelled, book?.cancelled ?? 0);
  return out;
}
