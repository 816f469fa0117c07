import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource, EntityManager } from 'typeorm';
import { PayableView } from '@app/contracts';
import { MERCHANT } from '@app/contracts/parties';
import { columns, inKeyOrder } from '../batching';
import { preparedStatement } from '../prepared';
import { PUBLISHED_AT_TEXT, type PublishedCursor } from '@app/platform';
import { saleDetailsOf } from '../transactions/sale-details';
import {
  CaptureClaim,
  CapturedRow,
  CapturePartyRow,
  LedgerTotalsRow,
  PayableWrite,
  PublishedSettlementEvent,
  SettlementRow,
} from './ledger-rows';

interface PayableRow {
  transaction_id: string;
  recipient_id: string | null;
  kind: PayableView['kind'];
  instalment: number;
  due_date: string;
  gross: string;
  fee: string;
  net: string;
  status: string;
}

// Dates as text: node-pg would turn a date into a local-midnight Date and shift it by the zone.
const PAYABLE_COLUMNS = 'transaction_id, recipient_id, kind, instalment, due_date::text AS due_date, gross, fee, net, status';

const READ_CAPTURED = preparedStatement<Omit<CapturedRow, 'terms'> & { details: unknown }>(
  'settlement_read_captured',
  'SELECT id, merchant_id, captured_amount, instalments, method, details FROM transactions WHERE id = ANY($1::uuid[])',
);

/** Claims each settlement not claimed yet and writes its capture payables; returns the claimed ids. */
const CLAIM_CAPTURES = preparedStatement<{ transaction_id: string }>(
  'settlement_claim_captures',
  `WITH claimed AS (
     INSERT INTO settlements (transaction_id, merchant_id, gross, fee, instalments, split, captured_on)
     SELECT * FROM unnest($1::uuid[], $2::uuid[], $3::int8[], $4::int8[], $5::int[], $6::jsonb[], $7::date[])
     ON CONFLICT (transaction_id) DO NOTHING RETURNING transaction_id, merchant_id),
   payables AS (
     INSERT INTO payables (transaction_id, merchant_id, recipient_id, kind, instalment, due_date, gross, fee, net)
     SELECT claimed.transaction_id, claimed.merchant_id, c.recipient_id, 'capture', c.instalment, c.due_date, c.gross, c.fee, c.net
     FROM claimed JOIN unnest($8::uuid[], $9::uuid[], $10::int[], $11::date[], $12::int8[], $13::int8[], $14::int8[])
       AS c (transaction_id, recipient_id, instalment, due_date, gross, fee, net) ON c.transaction_id = claimed.transaction_id)
   SELECT transaction_id FROM claimed`,
);

/**
 * The payables ledger's SQL: settlements, payables and chargebacks. Every write of a settlement
 * runs in the Postgres transaction the caller passes, which first claims or locks the
 * transaction's `settlements` row, so a re-delivered, concurrent or reordered event writes nothing
 * twice. The amounts are the caller's: the settlement use-cases.
 */
@Injectable()
export class LedgerRepository {
  constructor(@InjectDataSource() private readonly db: DataSource) {}

  /**
   * The captures and cancels the outbox published after `after` and by `upTo`, oldest first, at
   * most `limit`, each saying whether its transaction's settlement is behind it: a capture with no
   * settlement, or a cancel whose settlement has settled less than the transaction's cancelled
   * amount. What the settlement sweep reads, to settle what lost events left undone.
   */
  publishedSettlementEvents(after: PublishedCursor, upTo: Date, limit: number): Promise<PublishedSettlementEvent[]> {
    return this.db.query(
      `SELECT o.id, ${PUBLISHED_AT_TEXT} AS "publishedAt", o.event, o.aggregate_id AS "transactionId",
         t.captured_amount > 0 AND (s.transaction_id IS NULL OR (o.event = 'transaction.cancelled' AND s.cancelled < t.cancelled_amount)) AS behind
       FROM outbox o
       JOIN transactions t ON t.id = o.aggregate_id
       LEFT JOIN settlements s ON s.transaction_id = o.aggregate_id
       WHERE o.event IN ('transaction.captured', 'transaction.cancelled') AND o.published_at IS NOT NULL
         AND (o.published_at, o.id) > ($1::timestamptz, $2::uuid) AND o.published_at <= $3
       ORDER BY o.published_at, o.id LIMIT $4`,
      [after.publishedAt, after.id, upTo, limit],
    );
  }

  /** Runs `work` in one Postgres transaction: all of its writes commit together or not at all. */
  inTransaction<T>(work: (tx: EntityManager) => Promise<T>): Promise<T> {
    return this.db.transaction(work);
  }

  /** No explicit transaction: each statement commits on its own. */
  get autocommit(): EntityManager {
    return this.db.manager;
  }

  /** The captured transactions among `ids` (lower-case), with the terms they are settled by. */
  async readCaptured(tx: EntityManager, ids: readonly string[]): Promise<CapturedRow[]> {
    const rows = await READ_CAPTURED(tx, [ids]);
    return rows.map(({ details, ...row }) => ({ ...row, terms: saleDetailsOf(details).terms }));
  }

  /**
   * Claims each settlement not claimed yet and writes its capture payables, in one statement: all
   * or none, and a second delivery of an event finds its claim taken and writes nothing. Returns
   * the ids claimed now. The ids of `claims` must be distinct.
   */
  async claimCaptures(tx: EntityManager, claims: readonly CaptureClaim[]): Promise<Set<string>> {
    const ordered = inKeyOrder(claims, (c) => c.id);
    const cells = ordered.flatMap((c) => c.payables.map((cell) => ({ c, cell })));
    const written = await CLAIM_CAPTURES(tx, [
      ...columns(
        ordered,
        (c) => c.id,
        (c) => c.merchantId,
        (c) => c.gross,
        (c) => c.fee,
        (c) => c.instalments,
        (c) => JSON.stringify(c.split),
        (c) => c.capturedOn,
      ),
      ...columns(
        cells,
        ({ c }) => c.id,
        ({ cell }) => cell.recipientId,
        ({ cell }) => cell.instalment,
        ({ cell }) => cell.dueDate,
        ({ cell }) => cell.gross,
        ({ cell }) => cell.fee,
        ({ cell }) => cell.net,
      ),
    ]);
    return new Set(written.map((w) => w.transaction_id));
  }

  /** The transaction's settlement, locked until `tx` ends; undefined when none was claimed. */
  async lockSettlement(tx: EntityManager, transactionId: string): Promise<SettlementRow | undefined> {
    const rows: SettlementRow[] = await tx.query('SELECT * FROM settlements WHERE transaction_id = $1 FOR UPDATE', [transactionId]);
    return rows[0];
  }

  /** What the transaction has cancelled, in cents. */
  async cancelledAmountOf(tx: EntityManager, transactionId: string): Promise<number> {
    const [t]: { cancelled_amount: string }[] = await tx.query('SELECT cancelled_amount FROM transactions WHERE id = $1', [transactionId]);
    return Number(t.cancelled_amount);
  }

  /** Records that the settlement's cancellations now add up to `total` cents. */
  async setSettledCancelled(tx: EntityManager, transactionId: string, total: number): Promise<void> {
    await tx.query('UPDATE settlements SET cancelled = $2 WHERE transaction_id = $1', [transactionId, total]);
  }

  /** The amount a chargeback of this acquirer id was recorded with (as stored), if it was. */
  async recordedChargebackAmount(tx: EntityManager, transactionId: string, chargebackId: string): Promise<string | undefined> {
    const known: { amount: string }[] = await tx.query('SELECT amount FROM chargebacks WHERE transaction_id = $1 AND chargeback_id = $2', [
      transactionId,
      chargebackId,
    ]);
    return known[0]?.amount;
  }

  /**
   * Locks the transaction's row until `tx` ends and reads what may still be taken back of it: the
   * captured cents neither cancelled, nor charged back, nor reserved by a cancel in flight (may be
   * negative). A cancel's claim re-checks the same columns when it takes the row after this.
   */
  async lockOpenAmount(tx: EntityManager, transactionId: string): Promise<number> {
    const [t]: { open: string }[] = await tx.query(
      `SELECT captured_amount - cancelled_amount - charged_back_amount - CASE WHEN pending_kind = 'cancel' THEN pending_amount ELSE 0 END AS open
       FROM transactions WHERE id = $1 FOR UPDATE`,
      [transactionId],
    );
    return Number(t.open);
  }

  /** Adds `amount` cents to what chargebacks took back of the transaction. */
  async addChargedBack(tx: EntityManager, transactionId: string, amount: number): Promise<void> {
    await tx.query('UPDATE transactions SET charged_back_amount = charged_back_amount + $2, updated_at = now() WHERE id = $1', [
      transactionId,
      amount,
    ]);
  }

  /** Records that the settlement's chargebacks now add up to `total` cents. */
  async setSettledChargedBack(tx: EntityManager, transactionId: string, total: number): Promise<void> {
    await tx.query('UPDATE settlements SET charged_back = $2 WHERE transaction_id = $1', [transactionId, total]);
  }

  /** Remembers the acquirer's chargeback id, so recording it again changes nothing. */
  async recordChargebackId(tx: EntityManager, transactionId: string, chargebackId: string, amount: number): Promise<void> {
    await tx.query('INSERT INTO chargebacks (transaction_id, chargeback_id, amount) VALUES ($1, $2, $3)', [
      transactionId,
      chargebackId,
      amount,
    ]);
  }

  /** Writes payables (or debits) of one kind for the transaction, in one statement. */
  async insertPayables(
    tx: EntityManager,
    transactionId: string,
    merchantId: string,
    kind: PayableView['kind'],
    cells: readonly PayableWrite[],
  ): Promise<void> {
    if (!cells.length) return;
    const values: unknown[] = [];
    const tuples = cells.map((c, i) => {
      values.push(c.recipientId, c.instalment, c.dueDate, c.gross, c.fee, c.net);
      const b = i * 6 + 4;
      return `($1, $2, $${b}, $3, $${b + 1}, $${b + 2}, $${b + 3}, $${b + 4}, $${b + 5})`;
    });
    await tx.query(
      `INSERT INTO payables (transaction_id, merchant_id, recipient_id, kind, instalment, due_date, gross, fee, net) VALUES ${tuples.join(', ')}`,
      [transactionId, merchantId, kind, ...values],
    );
  }

  async payablesOf(merchantId: string, transactionId: string): Promise<PayableView[]> {
    const rows: PayableRow[] = await this.db.query(
      `SELECT ${PAYABLE_COLUMNS} FROM payables WHERE transaction_id = $1 AND merchant_id = $2 ORDER BY id`,
      [transactionId, merchantId],
    );
    return rows.map(toView);
  }

  async list(by: { recipientId: string } | { merchantId: string }): Promise<(PayableView & { transactionId: string })[]> {
    const rows: PayableRow[] =
      'recipientId' in by
        ? await this.db.query(`SELECT ${PAYABLE_COLUMNS} FROM payables WHERE recipient_id::text = lower($1) ORDER BY due_date, id`, [
            by.recipientId,
          ])
        : await this.db.query(`SELECT ${PAYABLE_COLUMNS} FROM payables WHERE merchant_id::text = lower($1) ORDER BY due_date, id`, [
            by.merchantId,
          ]);
    return rows.map((r) => ({ transactionId: r.transaction_id.toUpperCase(), ...toView(r) }));
  }

  /**
   * For ledger:verify, per transaction that was captured or settled (of one merchant, or all): its
   * amounts, its settlement's, and the sums of its payables per kind.
   */
  ledgerTotals(merchantId?: string): Promise<LedgerTotalsRow[]> {
    return this.db.query(
      `
      SELECT t.id, t.captured_amount AS captured, t.cancelled_amount AS cancelled, t.charged_back_amount AS charged_back,
             s.gross AS s_gross, s.fee AS s_fee, s.cancelled AS s_cancelled, s.charged_back AS s_cb,
             COALESCE(SUM(p.gross) FILTER (WHERE p.kind = 'capture'), 0) AS cap_gross,
             COALESCE(SUM(p.fee) FILTER (WHERE p.kind = 'capture'), 0) AS cap_fee,
             COALESCE(SUM(p.gross) FILTER (WHERE p.kind = 'cancel'), 0) AS cancel_gross,
             COALESCE(SUM(p.gross) FILTER (WHERE p.kind = 'chargeback'), 0) AS cb_gross
      FROM transactions t
      LEFT JOIN settlements s ON s.transaction_id = t.id
      LEFT JOIN payables p ON p.transaction_id = t.id
      WHERE (t.captured_amount > 0 OR s.transaction_id IS NOT NULL) ${merchantId ? 'AND t.merchant_id::text = $1' : ''}
      GROUP BY t.id, s.transaction_id`,
      scope(merchantId),
    );
  }

  /** For ledger:verify: the capture payables summed per transaction and party (of one merchant, or all), with the stored split. */
  capturePartyTotals(merchantId?: string): Promise<CapturePartyRow[]> {
    return this.db.query(
      `
      SELECT p.transaction_id, COALESCE(p.recipient_id::text, '${MERCHANT}') AS party, SUM(p.gross) AS gross, SUM(p.fee) AS fee, SUM(p.net) AS net, s.split AS expected
      FROM payables p JOIN settlements s ON s.transaction_id = p.transaction_id
      WHERE p.kind = 'capture' ${merchantId ? 'AND p.merchant_id::text = $1' : ''} GROUP BY p.transaction_id, party, s.split`,
      scope(merchantId),
    );
  }
}

const scope = (merchantId?: string) => (merchantId ? [merchantId.toLowerCase()] : []);

function toView(r: PayableRow): PayableView {
  return {
    party: r.recipient_id ?? MERCHANT,
    kind: r.kind,
    instalment: r.instalment,
    dueDate: r.due_date,
    gross: Number(r.gross),
    fee: Number(r.fee),
    net: Number(r.net),
    status: r.status,
  };
}
