import type { AcquirerBook, SaleBooks } from './acquirer.connector';

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
  check: 'approved' | 'captured' | 'cancelled' | 'held' | 'orphan';
  gateway: number | boolean | string;
  acquirer: number | boolean | string;
  /** An orphan charge's own references at the acquirer: its tid, and Cielo's PaymentId. */
  tid?: string;
  saleRef?: string;
}

/** The statuses whose authorization the acquirer approved and kept (docs/merchants/status-codes.md). */
const APPROVED_STATUSES = new Set([3, 6, 8, 12]);

/** The cents a charge still holds on the card: captured (or, before any capture, authorized), less what was voided. */
export function heldBy(book: AcquirerBook): number {
  if (!book.approved) return 0;
  return Math.max(0, (book.captured > 0 ? book.captured : (book.amount ?? 0)) - book.cancelled);
}

/**
 * Where the gateway's record and the acquirer's books disagree for one transaction. A capture or
 * cancel in flight may be in the books before the record: a transaction held for less than
 * `heldGraceMs` is not compared; one held longer is itself a difference (its worker is gone and
 * the reconciler has not settled it).
 *
 * Every other charge under the sale's order id that still holds money is an `orphan`: the gateway
 * recorded no such charge (a create whose answer was lost, found after the sale was declined
 * without a tid; a second create of one sale at Cielo). Its tid and PaymentId are printed so the
 * operator can void it at the acquirer. One voided whole holds nothing and is no difference.
 */
export function differencesOf(t: RecordedTransaction, books: SaleBooks | undefined, now: Date, heldGraceMs: number): ReconcileDifference[] {
  const out: ReconcileDifference[] = [];
  for (const other of books?.others ?? []) {
    const held = heldBy(other);
    if (held > 0)
      out.push({
        transactionId: t.id.toUpperCase(),
        merchantId: t.merchantId,
        check: 'orphan',
        gateway: 'not recorded',
        acquirer: held,
        tid: other.tid,
        ...(other.saleRef ? { saleRef: other.saleRef } : {}),
      });
  }
  let book = books?.sale;
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
  // A charge the gateway reversed (its outcome was unknown, so it was voided whole and recorded as
  // declined) stands in a real acquirer's books as approved and wholly voided: nothing was kept.
  if (book && !APPROVED_STATUSES.has(t.status) && book.amount !== undefined && book.cancelled >= book.amount) book = undefined;
  diff('approved', APPROVED_STATUSES.has(t.status), book?.approved ?? false);
  diff('captured', t.captured, book?.captured ?? 0);
  diff('cancelled', t.cancelled, book?.cancelled ?? 0);
  return out;
}
