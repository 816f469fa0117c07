import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource, EntityManager } from 'typeorm';
import { RebillState, TransactionEvent } from '@app/contracts';
import { TransactionRow } from '../transactions/transaction-rows';
import { insertCharges, insertOutboxEvents, lockDecided, REBILL_COLUMNS, writeAdvances } from './charge-statements';
import {
  AdvanceRow,
  AdvanceWrite,
  ChargeToOpen,
  CycleRow,
  NewRebill,
  OpenedCharge,
  RebillListRow,
  RebillPageCursor,
  RebillRow,
  RebillStart,
} from './rebill-rows';

interface OpenRow {
  rebill_id: string;
  merchant_id: string;
  transaction_id: string;
  token_card: string;
  cycle: number;
  attempt: number;
  merchant_initiated: boolean;
}

/**
 * The SQL of rebills and their charges. What to write is decided by libs/rebills (the schedule,
 * the charge ids, the events), which runs the statements that take `m` in one Postgres
 * transaction of `transaction`. The invariants that make "each cycle charged exactly once" hold
 * in these statements:
 * - a charge is opened only for an active rebill with none open, under its row lock (lockDue), in
 *   the same Postgres transaction that sets `open_transaction_id` (markOpen; insert for the first);
 * - a rebill moves on only from the charge it has open, once that charge is decided, by
 *   compare-and-set on `open_transaction_id` (lockDecided), so one decision moves it once.
 */
@Injectable()
export class RebillsRepository {
  constructor(@InjectDataSource() private readonly db: DataSource) {}

  /** Runs `work` in one Postgres transaction; the statements below that take `m` join it. */
  transaction<T>(work: (m: EntityManager) => Promise<T>): Promise<T> {
    return this.db.transaction(work);
  }

  /** Records a new rebill, starting where `start` says. */
  async insert(m: EntityManager, r: NewRebill, start: RebillStart): Promise<RebillRow> {
    const [rebill] = await m.query<RebillRow[]>(
      `INSERT INTO rebills (id, merchant_id, reference, period, frequency, date_start, date_end, retry_days, acquirer, instalments, currency,
         amount, token_card, masked_card, brand, card_expires, details, url_return, next_cycle, next_attempt, next_due_at, open_transaction_id,
         due_shift_days)
       VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16, $17, $18, 1, 0, $19, $20, $21)
       RETURNING ${REBILL_COLUMNS}`,
      [
        r.id,
        r.merchantId,
        r.reference,
        r.period,
        r.frequency,
        r.dateStart,
        r.dateEnd,
        r.retryDays,
        r.acquirer,
        r.instalments,
        r.currency,
        r.amount,
        r.tokenCard,
        r.maskedCard,
        r.brand,
        r.cardExpires,
        JSON.stringify(r.details),
        r.urlReturn ?? null,
        start.nextDueAt,
        start.openTransactionId,
        r.shiftDays,
      ],
    );
    return rebill;
  }

  /**
   * Locks up to `limit` active rebills due at `asOf` with nothing open, oldest due first. Rows
   * another runner has locked are skipped (it is opening them).
   *
   * In due order only, as the rebills_due index reads them: every cycle of a date falls due at the
   * same instant (00:00 UTC), so a tie-break on id made Postgres fetch and sort every due row for
   * each batch (100 000 due at once, in a scratch table: 119 ms a batch on average with the sort
   * spilling to disk, against 7 ms). Which of the rebills due at one instant goes first does not
   * matter; each is opened once either way (the row lock and the charge id).
   */
  lockDue(m: EntityManager, asOf: Date, limit: number): Promise<RebillRow[]> {
    return m.query<RebillRow[]>(
      `SELECT ${REBILL_COLUMNS} FROM rebills
       WHERE state = 'active' AND open_transaction_id IS NULL AND next_due_at <= $1
       ORDER BY next_due_at LIMIT $2 FOR UPDATE SKIP LOCKED`,
      [asOf, limit],
    );
  }

  /** Records charges' transactions (status 0) and cycles; returns the transactions in the order given (see insertCharges). */
  insertCharges(m: EntityManager, charges: readonly ChargeToOpen[]): Promise<(TransactionRow | undefined)[]> {
    return insertCharges(m, charges);
  }

  /** Marks each rebill's charge as the one it has open. */
  async markOpen(m: EntityManager, charges: readonly Pick<ChargeToOpen, 'rebillId' | 'tx'>[]): Promise<void> {
    await m.query(
      `UPDATE rebills r SET open_transaction_id = u.tx, version = r.version + 1, updated_at = now()
       FROM unnest($1::uuid[], $2::uuid[]) AS u (id, tx) WHERE r.id = u.id`,
      [charges.map((c) => c.rebillId), charges.map((c) => c.tx.id)],
    );
  }

  /** See lockDecided: the rebills of `keys` whose open charge is that one and is decided, locked. */
  lockDecided(m: EntityManager, keys: readonly { rebillId: string; transactionId: string }[]): Promise<AdvanceRow[]> {
    return lockDecided(m, keys);
  }

  /** Moves the rebills on as decided: the open charge closed, the next one scheduled (or none). */
  writeAdvances(m: EntityManager, updates: readonly AdvanceWrite[]): Promise<void> {
    return writeAdvances(m, updates);
  }

  /** Records transaction events in the outbox (its relay publishes them). */
  insertOutboxEvents(m: EntityManager, events: readonly TransactionEvent[]): Promise<void> {
    return insertOutboxEvents(m, events);
  }

  /** Rebills whose open charge is decided but which were not moved on (their advance was lost). */
  findDecidedOpen(limit: number): Promise<{ rebill_id: string; transaction_id: string }[]> {
    return this.db.query(
      `SELECT r.id AS rebill_id, r.open_transaction_id AS transaction_id FROM rebills r JOIN transactions t ON t.id = r.open_transaction_id
       WHERE r.open_transaction_id IS NOT NULL AND t.status <> 0 LIMIT $1`,
      [limit],
    );
  }

  /** Open charges still undecided after `olderThanS` seconds: their authorization job may be lost. */
  async findUndecidedOpen(olderThanS: number, limit: number): Promise<OpenedCharge[]> {
    const rows = await this.db.query<OpenRow[]>(
      `SELECT c.rebill_id, r.merchant_id, t.id AS transaction_id, r.token_card, c.cycle, c.attempt, c.merchant_initiated FROM rebills r
         JOIN transactions t ON t.id = r.open_transaction_id JOIN rebill_cycles c ON c.transaction_id = t.id
       WHERE r.open_transaction_id IS NOT NULL AND t.status = 0 AND t.created_at < now() - make_interval(secs => $1)
       ORDER BY t.created_at LIMIT $2`,
      [olderThanS, limit],
    );
    return rows.map((r) => ({
      rebillId: r.rebill_id,
      merchantId: r.merchant_id,
      transactionId: r.transaction_id,
      tokenCard: r.token_card,
      cycle: r.cycle,
      attempt: r.attempt,
      merchantInitiated: r.merchant_initiated,
    }));
  }

  /** How many rebills have a charge in flight. */
  async countOpen(): Promise<number> {
    const [r] = await this.db.query<{ n: number }[]>(`SELECT count(*)::int AS n FROM rebills WHERE open_transaction_id IS NOT NULL`);
    return r.n;
  }

  /** Where a rebill stands (undefined when there is none by this id). */
  async stateOf(id: string): Promise<RebillState | undefined> {
    const rows = await this.db.query<{ state: RebillState }[]>(`SELECT state FROM rebills WHERE id = $1`, [id.toLowerCase()]);
    return rows[0]?.state;
  }

  async find(merchantId: string | undefined, id: string): Promise<RebillRow | undefined> {
    const rows = await this.db.query<RebillRow[]>(
      `SELECT ${REBILL_COLUMNS} FROM rebills WHERE id = $1 AND ($2::uuid IS NULL OR merchant_id = $2)`,
      [id.toLowerCase(), merchantId ?? null],
    );
    return rows[0];
  }

  /** Every charge of one rebill, dunning retries included. */
  async chargesOf(rebillId: string): Promise<CycleRow[]> {
    return (await this.cyclesOf(this.db.manager, [rebillId.toLowerCase()])).get(rebillId.toLowerCase()) ?? [];
  }

  /** Every charge of these rebills, with its transaction's outcome, in cycle and attempt order. */
  async cyclesOf(m: EntityManager, rebillIds: readonly string[]): Promise<Map<string, CycleRow[]>> {
    const rows = await m.query<CycleRow[]>(
      `SELECT c.rebill_id, c.cycle, c.attempt, c.transaction_id, to_char(c.cycle_date, 'YYYY-MM-DD') AS cycle_date, c.merchant_initiated,
         t.status, t.error_code, t.processor, t.amount, c.created_at
       FROM rebill_cycles c JOIN transactions t ON t.id = c.transaction_id
       WHERE c.rebill_id = ANY($1::uuid[]) ORDER BY c.rebill_id, c.cycle, c.attempt`,
      [rebillIds],
    );
    const out = new Map<string, CycleRow[]>();
    for (const r of rows) out.set(r.rebill_id, [...(out.get(r.rebill_id) ?? []), r]);
    return out;
  }

  /**
   * A merchant's rebills (or every merchant's), newest first, optionally in one state; a page of
   * them by keyset when `before` is the (created_at, id) of the last row of the page before. Each
   * row carries that key as `cursor` (created_at as Postgres prints it, microseconds included: a
   * JavaScript Date would drop them and repeat or skip a row) and how many cycles were charged.
   */
  list(scope: { merchantId?: string; state?: RebillState; limit: number; before?: RebillPageCursor }): Promise<RebillListRow[]> {
    return this.db.query(
      `SELECT ${REBILL_COLUMNS}, rebills.created_at::text AS cursor,
         (SELECT count(DISTINCT c.cycle)::int FROM rebill_cycles c JOIN transactions t ON t.id = c.transaction_id
          WHERE c.rebill_id = rebills.id AND t.status IN (8, 12)) AS cycles_charged
       FROM rebills
       WHERE ($1::uuid IS NULL OR merchant_id = $1) AND ($2::text IS NULL OR state = $2)
         AND ($4::timestamptz IS NULL OR (created_at, id) < ($4, $5::uuid))
       ORDER BY created_at DESC, id DESC LIMIT $3`,
      [scope.merchantId ?? null, scope.state ?? null, scope.limit, scope.before?.createdAt ?? null, scope.before?.id ?? null],
    );
  }

  /**
   * Sets the merchant's rebill to cancelled, with nothing more to fall due, when it is in one of
   * the states `from`; returns it as it now is, or undefined when it is not in one of them.
   */
  async cancel(merchantId: string, id: string, from: readonly RebillState[]): Promise<RebillRow | undefined> {
    // An UPDATE answers [rows, count] through TypeORM.
    const [rows] = await this.db.query<[RebillRow[], number]>(
      `UPDATE rebills SET state = 'cancelled', next_due_at = NULL, version = version + 1, updated_at = now()
       WHERE id = $1 AND merchant_id = $2 AND state = ANY($3::text[]) RETURNING ${REBILL_COLUMNS}`,
      [id.toLowerCase(), merchantId, from],
    );
    return rows[0];
  }
}
