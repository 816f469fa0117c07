import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { randomUUID } from 'node:crypto';
import { DataSource } from 'typeorm';
import { EventName, OperationName, SettlementTerms, TransactionStatus, TransactionView } from '@app/contracts';
import { computeSplit, processingFee } from '@app/split';

export interface TransactionRow {
  id: string;
  merchant_id: string;
  reference: string;
  operation: number;
  status: number;
  status_version: number;
  acquirer: number;
  method: number;
  instalments: number;
  currency: string;
  amount: string; // int8 comes back as text: converted with Number() only in toView (cents < 2^53)
  captured_amount: string;
  cancelled_amount: string;
  masked_card: string;
  brand: string;
  token_card: string | null;
  error_code: string;
  processor: TransactionView['processor'];
  details: Record<string, unknown>;
  url_return: string | null;
  created_at: Date;
}

export interface NewTransaction {
  id: string;
  merchantId: string;
  reference: string;
  operation: OperationName;
  acquirer: number;
  method: number;
  instalments: number;
  currency: string;
  amount: number;
  maskedCard: string;
  brand: string;
  tokenCard?: string;
  details: Record<string, unknown>;
  urlReturn?: string;
}

export interface Transition {
  status: TransactionStatus;
  capturedAmount?: number;
  cancelledAmount?: number;
  errorCode?: string;
  processor?: TransactionView['processor'];
  tokenCard?: string;
  maskedCard?: string;
  brand?: string;
}

export interface OutboxEvent {
  event: EventName;
  payload: unknown;
}

const OPERATION_CODES: Record<OperationName, number> = { authorize: 1, capture: 2, sale: 3, cancel: 5, report: 6 };
const OPERATION_NAMES = Object.fromEntries(Object.entries(OPERATION_CODES).map(([k, v]) => [v, k])) as Record<number, OperationName>;

/**
 * Transactions, always read scoped by merchant. A status changes only by compare-and-set on
 * `status_version`, in the same Postgres transaction as the outbox events it causes: either both
 * are written or neither, and of two concurrent changes exactly one wins.
 */
@Injectable()
export class TransactionsRepository {
  constructor(@InjectDataSource() private readonly db: DataSource) {}

  async insertPending(t: NewTransaction): Promise<TransactionRow> {
    const rows: TransactionRow[] = await this.db.query(
      `INSERT INTO transactions (id, merchant_id, reference, operation, status, acquirer, method, instalments, currency, amount,
         masked_card, brand, token_card, details, url_return)
       VALUES ($1, $2, $3, $4, 0, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14) RETURNING *`,
      [t.id, t.merchantId, t.reference, OPERATION_CODES[t.operation], t.acquirer, t.method, t.instalments, t.currency, t.amount, t.maskedCard, t.brand, t.tokenCard ?? null, t.details, t.urlReturn ?? null],
    );
    return rows[0];
  }

  /** Removes a sale that was recorded but never sent (the queue was down, or the vault refused it). */
  async deletePending(merchantId: string, id: string): Promise<void> {
    await this.db.query('DELETE FROM transactions WHERE id = $1 AND merchant_id = $2 AND status = 0 AND status_version = 1', [id, merchantId]);
  }

  async findByMerchantAndId(merchantId: string, id: string): Promise<TransactionRow | undefined> {
    const rows: TransactionRow[] = await this.db.query('SELECT * FROM transactions WHERE id = $1 AND merchant_id = $2', [id, merchantId]);
    return rows[0];
  }

  async findLatestByMerchantAndReference(merchantId: string, reference: string): Promise<TransactionRow | undefined> {
    const rows: TransactionRow[] = await this.db.query(
      'SELECT * FROM transactions WHERE merchant_id = $1 AND reference = $2 ORDER BY created_at DESC, id DESC LIMIT 1',
      [merchantId, reference],
    );
    return rows[0];
  }

  /** Cents of a captured transaction that chargebacks took back (recorded by settlement). */
  async chargedBackOf(id: string): Promise<number> {
    const rows: { charged_back: string }[] = await this.db.query('SELECT charged_back FROM settlements WHERE transaction_id = $1', [id]);
    return rows[0] ? Number(rows[0].charged_back) : 0;
  }

  /** Sales still at status 0 after `olderThanS` seconds, oldest first (for the reconciler). */
  findStalePending(olderThanS: number, limit: number): Promise<TransactionRow[]> {
    return this.db.query(
      `SELECT * FROM transactions WHERE status = 0 AND created_at < now() - make_interval(secs => $1) ORDER BY created_at LIMIT $2`,
      [olderThanS, limit],
    );
  }

  /**
   * Applies a status change if nobody changed the transaction since `row` was read, and records
   * its events in the outbox, in one statement (one round trip, one commit): either both are
   * written or neither, and of two concurrent changes exactly one wins. Returns the new row, or
   * undefined when another change won the race (the caller re-reads and decides). The new row is
   * the read row with the change applied, which the compare-and-set on status_version guarantees
   * is what Postgres now holds, so the events can be built from it before the write.
   */
  async transition(row: TransactionRow, change: Transition, events: (next: TransactionRow) => OutboxEvent[]): Promise<TransactionRow | undefined> {
    const next: TransactionRow = {
      ...row,
      status: change.status,
      status_version: row.status_version + 1,
      captured_amount: change.capturedAmount !== undefined ? String(change.capturedAmount) : row.captured_amount,
      cancelled_amount: change.cancelledAmount !== undefined ? String(change.cancelledAmount) : row.cancelled_amount,
      error_code: change.errorCode ?? row.error_code,
      processor: { ...row.processor, ...change.processor },
      token_card: change.tokenCard ?? row.token_card,
      masked_card: change.maskedCard ?? row.masked_card,
      brand: change.brand ?? row.brand,
    };
    const out = events(next);
    // The outbox rows are what tells the caller the update won: there is always at least one.
    if (!out.length) throw new Error('a status change must record at least one event');
    const written: { id: string }[] = await this.db.query(
      `WITH updated AS (
         UPDATE transactions SET
           status = $3, status_version = status_version + 1,
           captured_amount = COALESCE($4, captured_amount), cancelled_amount = COALESCE($5, cancelled_amount),
           error_code = COALESCE($6, error_code), processor = processor || COALESCE($7, '{}'::jsonb),
           token_card = COALESCE($8, token_card), masked_card = COALESCE($9, masked_card), brand = COALESCE($10, brand),
           updated_at = now()
         WHERE id = $1 AND status_version = $2 RETURNING id)
       INSERT INTO outbox (id, event, aggregate_id, payload)
       SELECT e.id, e.event, updated.id, e.payload FROM updated CROSS JOIN unnest($11::uuid[], $12::text[], $13::jsonb[]) AS e (id, event, payload)
       RETURNING id`,
      [row.id, row.status_version, change.status, change.capturedAmount ?? null, change.cancelledAmount ?? null, change.errorCode ?? null,
        change.processor ? JSON.stringify(change.processor) : null, change.tokenCard ?? null, change.maskedCard ?? null, change.brand ?? null,
        out.map(() => randomUUID()), out.map((e) => e.event), out.map((e) => JSON.stringify(e.payload))],
    );
    return written.length ? next : undefined;
  }

}

export function toTransactionView(row: TransactionRow): TransactionView {
  return {
    id: row.id.toUpperCase(),
    operation: OPERATION_NAMES[row.operation],
    status: row.status as TransactionStatus,
    statusVersion: row.status_version,
    errorCode: row.error_code,
    reference: row.reference,
    currency: row.currency,
    amount: Number(row.amount),
    capturedAmount: Number(row.captured_amount),
    cancelledAmount: Number(row.cancelled_amount),
    acquirer: row.acquirer,
    instalments: row.instalments,
    createdAt: new Date(row.created_at).toISOString(),
    processor: row.processor ?? {},
    tokenCard: row.token_card ?? undefined,
    split: splitOf(row),
  };
}

/**
 * The split of the captured amount (before capture: of the sale amount), from the terms frozen at
 * the sale and the same engine settlement uses, so the response and the payables always agree.
 */
function splitOf(row: TransactionRow): TransactionView['split'] {
  const terms = (row.details as { terms?: SettlementTerms }).terms;
  if (!terms) return undefined;
  const gross = Number(row.captured_amount) || Number(row.amount);
  return computeSplit(terms.split ?? [], gross, processingFee(gross, terms.fee));
}
