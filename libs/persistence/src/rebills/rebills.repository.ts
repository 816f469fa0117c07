import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { randomUUID } from 'node:crypto';
import { DataSource, EntityManager } from 'typeorm';
import {
  chargeDateOf,
  cycleDate,
  dueAt,
  Events,
  nextStep,
  rebillChargeId,
  RebillPaymentView,
  RebillPeriod,
  RebillSchedule,
  RebillState,
  rebillStatusOf,
  RebillView,
  StatusMessages,
  TransactionEvent,
  TransactionStatus,
  TransactionView,
} from '@app/contracts';
import { columns, distinctGroups, statementBatcher } from '../batching';
import { NewTransaction, TransactionRow } from '../transactions/transactions.repository';

export interface RebillRow {
  id: string;
  merchant_id: string;
  reference: string;
  state: RebillState;
  period: RebillPeriod;
  frequency: number;
  date_start: string;
  date_end: string;
  retry_days: number[];
  /** See shiftDaysFor. */
  due_shift_days: number;
  acquirer: number;
  instalments: number;
  currency: string;
  amount: string;
  token_card: string;
  masked_card: string;
  brand: string;
  card_expires: string;
  details: RebillDetails;
  url_return: string | null;
  next_cycle: number;
  next_attempt: number;
  next_due_at: Date | null;
  open_transaction_id: string | null;
  suspended_reason: string | null;
  version: number;
  created_at: Date;
  updated_at: Date;
}

/** What every charge of a rebill is recorded with (a sale's details: terms frozen at creation). */
export interface RebillDetails {
  method: number;
  groupNumber?: string;
  departureTax?: number;
  billing?: unknown;
  fraud?: boolean;
  terms?: unknown;
}

export interface NewRebill {
  id: string;
  merchantId: string;
  reference: string;
  period: RebillPeriod;
  frequency: number;
  dateStart: string;
  dateEnd: string;
  retryDays: readonly number[];
  /** See shiftDaysFor. */
  shiftDays: number;
  acquirer: number;
  instalments: number;
  currency: string;
  amount: number;
  tokenCard: string;
  maskedCard: string;
  brand: string;
  /** The last day the card is valid (YYYY-MM-DD). */
  cardExpires: string;
  details: RebillDetails;
  urlReturn?: string;
}

/** Where a page of a rebill list stopped (newest first: creation time, then id). */
export interface RebillPageCursor {
  /** Best as Postgres prints it (the row's `cursor`): a Date keeps milliseconds only. */
  createdAt: Date | string;
  id: string;
}

/** A rebill as a list shows it: its row, its keyset cursor, and its cycles charged so far. */
export type RebillListRow = RebillRow & {
  /** created_at as Postgres prints it (see RebillPageCursor). */
  cursor: string;
  /** Cycles with an approved charge (8, or 12 once partly cancelled); dunning retries of one cycle count once. */
  cycles_charged: number;
};

export interface CycleRow {
  rebill_id: string;
  cycle: number;
  attempt: number;
  transaction_id: string;
  cycle_date: string;
  merchant_initiated: boolean;
  status: number;
  error_code: string;
  processor: TransactionView['processor'];
  amount: string;
  /** When the charge was opened (the cycle's date, or a retry's, is when it fell due). */
  created_at: Date;
}

/** A charge just opened: its transaction (status 0) as recorded, and which cycle it is. */
export interface OpenedCharge {
  rebillId: string;
  merchantId: string;
  transactionId: string;
  tokenCard: string;
  cycle: number;
  attempt: number;
  merchantInitiated: boolean;
  /** The transaction as just recorded (absent for a charge found open later). */
  recorded?: TransactionRow;
}

interface OpenRow {
  rebill_id: string;
  merchant_id: string;
  transaction_id: string;
  token_card: string;
  cycle: number;
  attempt: number;
  merchant_initiated: boolean;
}

type AdvanceRow = RebillRow & {
  t_status: number;
  t_error_code: string;
  t_return_code: string | null;
  c_cycle: number;
  c_attempt: number;
  c_opened_at: Date;
};

export interface AdvanceResult {
  rebillId: string;
  transactionId: string;
  state: RebillState;
  /** Set when this advance suspended the rebill. */
  suspended?: string;
}

/** The columns of RebillRow, of the rebills table under `alias`; dates as YYYY-MM-DD text. */
const rebillColumns = (a = 'rebills') => `${a}.id, ${a}.merchant_id, ${a}.reference, ${a}.state, ${a}.period, ${a}.frequency,
  to_char(${a}.date_start, 'YYYY-MM-DD') AS date_start, to_char(${a}.date_end, 'YYYY-MM-DD') AS date_end, ${a}.retry_days, ${a}.due_shift_days, ${a}.acquirer,
  ${a}.instalments, ${a}.currency, ${a}.amount, ${a}.token_card, ${a}.masked_card, ${a}.brand,
  to_char(${a}.card_expires, 'YYYY-MM-DD') AS card_expires, ${a}.details, ${a}.url_return, ${a}.next_cycle, ${a}.next_attempt,
  ${a}.next_due_at, ${a}.open_transaction_id, ${a}.suspended_reason, ${a}.version, ${a}.created_at, ${a}.updated_at`;
const REBILL_COLUMNS = rebillColumns();

const TX_COLUMNS = `id, merchant_id, reference, operation, status, status_version, acquirer, method, instalments, currency, amount,
  captured_amount, cancelled_amount, masked_card, brand, token_card, error_code, processor, details, url_return, created_at,
  charged_back_amount, pending_operation_id, pending_kind, pending_amount`;

const INSERT_TRANSACTIONS = `INSERT INTO transactions (id, merchant_id, reference, operation, status, acquirer, method, instalments, currency, amount,
     masked_card, brand, token_card, details, url_return)
   SELECT id, merchant_id, reference, 3, 0, acquirer, method, instalments, currency, amount, masked_card, brand, token_card, details, url_return
   FROM unnest($1::uuid[], $2::uuid[], $3::text[], $4::int[], $5::int[], $6::int[], $7::text[], $8::int8[], $9::text[], $10::text[], $11::text[], $12::jsonb[], $13::text[])
     AS i (id, merchant_id, reference, acquirer, method, instalments, currency, amount, masked_card, brand, token_card, details, url_return)
   ON CONFLICT (id) DO NOTHING
   RETURNING ${TX_COLUMNS}`;

const INSERT_CYCLES = `INSERT INTO rebill_cycles (rebill_id, cycle, attempt, transaction_id, cycle_date, merchant_initiated)
   SELECT * FROM unnest($1::uuid[], $2::int[], $3::int[], $4::uuid[], $5::date[], $6::boolean[])
   ON CONFLICT DO NOTHING`;

/**
 * Rebills and their charges. The invariants that make "each cycle charged exactly once" hold:
 * - a charge's transaction id is derived from (rebill, cycle, attempt) (rebillChargeId);
 * - a charge is opened only for an active rebill with none open, under its row lock, in the same
 *   Postgres transaction that sets `open_transaction_id` (openDue; create for the first);
 * - a rebill moves on only from the charge it has open, once that charge is decided, by
 *   compare-and-set on `open_transaction_id` (advance), so one decision moves it once.
 */
@Injectable()
export class RebillsRepository {
  /** Concurrent advances go out as one Postgres transaction (see statementBatcher). */
  private readonly advanceOne: (key: { rebillId: string; transactionId: string }) => Promise<AdvanceResult | undefined>;

  constructor(@InjectDataSource() private readonly db: DataSource) {
    this.advanceOne = statementBatcher((keys) => this.advanceMany(keys));
  }

  /**
   * Records a new rebill and, when its first cycle is already due, that cycle's charge (opened,
   * status 0), in one Postgres transaction.
   */
  async create(r: NewRebill, chargeFirst: boolean): Promise<{ rebill: RebillRow; charge?: TransactionRow }> {
    return this.db.transaction(async (m) => {
      const date = r.dateStart;
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
          dueAt(date, r.shiftDays),
          chargeFirst ? rebillChargeId(r.id, 1, 0) : null,
          r.shiftDays,
        ],
      );
      if (!chargeFirst) return { rebill };
      const tx = chargeOf(rebill, rebillChargeId(r.id, 1, 0), 1, 0);
      // The card holder takes part in this one: it carries the security code sent with the rebill.
      const [charge] = await this.insertCharges(m, [{ tx, rebillId: r.id, cycle: 1, attempt: 0, date, mit: false }]);
      return { rebill, charge };
    });
  }

  /**
   * Opens the next charge of up to `limit` active rebills due at `asOf` with nothing open, oldest
   * due first. Rows another runner has locked are skipped (it is opening them).
   *
   * In due order only, as the rebills_due index reads them: every cycle of a date falls due at the
   * same instant (00:00 UTC), so a tie-break on id made Postgres fetch and sort every due row for
   * each batch (100 000 due at once, in a scratch table: 119 ms a batch on average with the sort
   * spilling to disk, against 7 ms). Which of the rebills due at one instant goes first does not
   * matter; each is opened once either way (the row lock and the charge id).
   */
  async openDue(asOf: Date, limit: number): Promise<OpenedCharge[]> {
    return this.db.transaction(async (m) => {
      const due = await m.query<RebillRow[]>(
        `SELECT ${REBILL_COLUMNS} FROM rebills
         WHERE state = 'active' AND open_transaction_id IS NULL AND next_due_at <= $1
         ORDER BY next_due_at LIMIT $2 FOR UPDATE SKIP LOCKED`,
        [asOf, limit],
      );
      if (!due.length) return [];
      const charges = due.map((r) => {
        const date = cycleDate(r.date_start, r.period, r.frequency, r.next_cycle);
        const id = rebillChargeId(r.id, r.next_cycle, r.next_attempt);
        return {
          rebill: r,
          tx: chargeOf(r, id, r.next_cycle, r.next_attempt),
          rebillId: r.id,
          cycle: r.next_cycle,
          attempt: r.next_attempt,
          date,
          // The card holder took part in the first charge only (at creation, with the security code).
          mit: true,
        };
      });
      const rows = await this.insertCharges(m, charges);
      await m.query(
        `UPDATE rebills r SET open_transaction_id = u.tx, version = r.version + 1, updated_at = now()
         FROM unnest($1::uuid[], $2::uuid[]) AS u (id, tx) WHERE r.id = u.id`,
        [charges.map((c) => c.rebillId), charges.map((c) => c.tx.id)],
      );
      return charges.map((c, i) => ({
        rebillId: c.rebillId,
        merchantId: c.rebill.merchant_id,
        transactionId: c.tx.id,
        tokenCard: c.rebill.token_card,
        cycle: c.cycle,
        attempt: c.attempt,
        merchantInitiated: c.mit,
        recorded: rows[i],
      }));
    });
  }

  /** Inserts charges' transactions and cycles; returns the transactions in the order given. */
  private async insertCharges(
    m: EntityManager,
    charges: readonly { tx: NewTransaction; rebillId: string; cycle: number; attempt: number; date: string; mit: boolean }[],
  ): Promise<(TransactionRow | undefined)[]> {
    const rows = await m.query<TransactionRow[]>(
      INSERT_TRANSACTIONS,
      columns(
        charges,
        (c) => c.tx.id,
        (c) => c.tx.merchantId,
        (c) => c.tx.reference,
        (c) => c.tx.acquirer,
        (c) => c.tx.method,
        (c) => c.tx.instalments,
        (c) => c.tx.currency,
        (c) => c.tx.amount,
        (c) => c.tx.maskedCard,
        (c) => c.tx.brand,
        (c) => c.tx.tokenCard ?? null,
        (c) => JSON.stringify(c.tx.details),
        (c) => c.tx.urlReturn ?? null,
      ),
    );
    // A charge already recorded (a rebill restored from a backup taken before its charge moved it
    // on) is the same charge: it is opened again as it stands, never recorded twice, and decided
    // (or answered from its decision) under its own operation key.
    await m.query(
      INSERT_CYCLES,
      columns(
        charges,
        (c) => c.rebillId,
        (c) => c.cycle,
        (c) => c.attempt,
        (c) => c.tx.id,
        (c) => c.date,
        (c) => c.mit,
      ),
    );
    const byId = new Map(rows.map((r) => [r.id, r]));
    return charges.map((c) => byId.get(c.tx.id.toLowerCase()));
  }

  /** Moves the rebill on from its open charge once that is decided; undefined when there is nothing to do. */
  advance(rebillId: string, transactionId: string): Promise<AdvanceResult | undefined> {
    return this.advanceOne({ rebillId: rebillId.toLowerCase(), transactionId: transactionId.toLowerCase() });
  }

  /**
   * One Postgres transaction for many advances. A rebill locked by someone else is skipped: the
   * holder is advancing or cancelling it, and the scheduler's next pass finds it if not.
   */
  private async advanceMany(keys: readonly { rebillId: string; transactionId: string }[]): Promise<(AdvanceResult | undefined)[]> {
    // Two callers may ask for the same advance at once (a charge's job following its decision up
    // while a scheduler pass finds it not yet moved on) and land in one batch. The rebill moves on
    // once: the first asks, a repeat finds nothing left to do, as if it came after (compare-and-set).
    // Joined twice, the rebill would be selected twice, and its suspension told twice.
    const [unique] = distinctGroups(keys, (k) => `${k.rebillId}/${k.transactionId}`);
    const asked = new Set(unique);
    const results = await this.db.transaction(async (m) => {
      const rows = await m.query<AdvanceRow[]>(
        `SELECT ${rebillColumns('r')}, t.status AS t_status, t.error_code AS t_error_code, t.processor->>'returnCode' AS t_return_code,
           c.cycle AS c_cycle, c.attempt AS c_attempt, c.created_at AS c_opened_at
         FROM rebills r JOIN unnest($1::uuid[], $2::uuid[]) AS k (id, tx) ON r.id = k.id AND r.open_transaction_id = k.tx
           JOIN transactions t ON t.id = k.tx JOIN rebill_cycles c ON c.transaction_id = k.tx
         WHERE t.status <> 0
         ORDER BY r.id FOR UPDATE OF r SKIP LOCKED`,
        [unique.map((k) => k.rebillId), unique.map((k) => k.transactionId)],
      );
      if (!rows.length) return new Map<string, AdvanceResult>();
      const updates = rows.map((r) => {
        if (r.state !== 'active')
          return { r, state: r.state, cycle: r.next_cycle, attempt: r.next_attempt, due: null, reason: r.suspended_reason };
        const next = nextStep(scheduleOf(r), {
          cycle: r.c_cycle,
          attempt: r.c_attempt,
          status: r.t_status,
          errorCode: r.t_error_code,
          returnCode: r.t_return_code ?? undefined,
          attemptedAt: r.c_opened_at,
        });
        return { r, state: next.state, cycle: next.nextCycle, attempt: next.nextAttempt, due: next.nextDueAt, reason: next.reason ?? null };
      });
      await m.query(
        `UPDATE rebills r SET state = u.state, next_cycle = u.cycle, next_attempt = u.attempt, next_due_at = u.due,
           open_transaction_id = NULL, suspended_reason = u.reason, version = r.version + 1, updated_at = now()
         FROM unnest($1::uuid[], $2::text[], $3::int[], $4::int[], $5::timestamptz[], $6::text[]) AS u (id, state, cycle, attempt, due, reason)
         WHERE r.id = u.id`,
        columns(
          updates,
          (u) => u.r.id,
          (u) => u.state,
          (u) => u.cycle,
          (u) => u.attempt,
          (u) => u.due,
          (u) => u.reason,
        ),
      );
      const suspended = updates.filter((u) => u.r.state === 'active' && u.state === 'suspended');
      // The merchant hears of a suspension on its listener (each charge's outcome is the charge's own event).
      const events = suspended.filter((u) => u.r.url_return);
      if (events.length) {
        const cycles = await this.cyclesOf(
          m,
          events.map((u) => u.r.id),
        );
        const payloads = events.map((u) => {
          const row: RebillRow = {
            ...u.r,
            state: 'suspended',
            next_due_at: null,
            open_transaction_id: null,
            suspended_reason: u.reason,
            version: u.r.version + 1,
          };
          const view = rebillViewOf(row, cycles.get(u.r.id) ?? []);
          const payload: TransactionEvent = {
            transactionId: view.id,
            merchantId: u.r.merchant_id,
            statusVersion: view.statusVersion,
            status: view.status,
            capturedAmount: 0,
            cancelledAmount: 0,
            urlReturn: u.r.url_return!,
            view,
          };
          return payload;
        });
        await m.query(
          `INSERT INTO outbox (id, event, aggregate_id, payload) SELECT * FROM unnest($1::uuid[], $2::text[], $3::uuid[], $4::jsonb[])`,
          columns(
            payloads,
            () => randomUUID(),
            () => Events.TransactionStatusChanged,
            (p) => p.transactionId.toLowerCase(),
            (p) => JSON.stringify(p),
          ),
        );
      }
      return new Map(
        updates.map((u) => [
          u.r.id,
          {
            rebillId: u.r.id,
            transactionId: u.r.open_transaction_id!,
            state: u.state,
            suspended: suspended.includes(u) ? u.reason! : undefined,
          },
        ]),
      );
    });
    return keys.map((k) => {
      if (!asked.has(k)) return undefined;
      const r = results.get(k.rebillId);
      return r && r.transactionId === k.transactionId ? r : undefined;
    });
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

  /** The rebill as report answers it (every cycle so far), or undefined when the merchant has none by this id. */
  async findView(merchantId: string | undefined, id: string): Promise<RebillView | undefined> {
    if (!UUID.test(id)) return undefined;
    const row = await this.find(merchantId, id);
    if (!row) return undefined;
    const cycles = await this.cyclesOf(this.db.manager, [row.id]);
    return rebillViewOf(row, cycles.get(row.id) ?? []);
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
   * Stops future cycles (a charge already open is decided if the tokenizer had sent it to the
   * acquirer, else the tokenizer abandons it unsent, 4/101). Returns the rebill
   * as it now is, or 'already' when it was cancelled before.
   */
  async cancel(merchantId: string, id: string): Promise<RebillRow | 'already' | 'finished' | undefined> {
    // An UPDATE answers [rows, count] through TypeORM.
    const [rows] = await this.db.query<[RebillRow[], number]>(
      `UPDATE rebills SET state = 'cancelled', next_due_at = NULL, version = version + 1, updated_at = now()
       WHERE id = $1 AND merchant_id = $2 AND state IN ('active', 'suspended') RETURNING ${REBILL_COLUMNS}`,
      [id.toLowerCase(), merchantId],
    );
    if (rows[0]) return rows[0];
    const now = await this.find(merchantId, id);
    if (!now) return undefined;
    return now.state === 'cancelled' ? 'already' : 'finished';
  }
}

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

export function scheduleOf(r: RebillRow): RebillSchedule {
  return {
    period: r.period,
    frequency: r.frequency,
    dateStart: r.date_start,
    dateEnd: r.date_end,
    retryDays: r.retry_days,
    shiftDays: r.due_shift_days,
  };
}

/** The transaction of a rebill's charge, as a sale of the card on file with the rebill's terms. */
export function chargeOf(r: RebillRow, id: string, cycle: number, attempt: number): NewTransaction {
  return {
    id,
    merchantId: r.merchant_id,
    reference: r.reference,
    operation: 'sale',
    acquirer: r.acquirer,
    method: r.details.method,
    instalments: r.instalments,
    currency: r.currency,
    amount: Number(r.amount),
    maskedCard: r.masked_card,
    brand: r.brand,
    tokenCard: r.token_card,
    details: {
      groupNumber: r.details.groupNumber,
      departureTax: r.details.departureTax,
      billing: r.details.billing,
      fraud: r.details.fraud,
      terms: r.details.terms,
      rebill: { id: r.id.toUpperCase(), cycle, attempt },
    },
    urlReturn: r.url_return ?? undefined,
  };
}

/** The date of the next charge (a cycle's date, or a retry's day), or undefined when none is scheduled. */
export function nextChargeDate(r: Pick<RebillRow, 'next_due_at' | 'due_shift_days'>): string | undefined {
  return r.next_due_at ? chargeDateOf(new Date(r.next_due_at), r.due_shift_days) : undefined;
}

/** The rebill as report, cancel and the suspension webhook show it. */
export function rebillViewOf(r: RebillRow, cycles: readonly CycleRow[]): RebillView {
  // A cycle shows its latest try (dunning retries replace the declined one).
  const latest = new Map<number, CycleRow>();
  for (const c of cycles) latest.set(c.cycle, c);
  const payments: RebillPaymentView[] = [...latest.values()].map((c) => ({
    cycle: c.cycle,
    date: c.cycle_date,
    ticket: c.transaction_id.toUpperCase(),
    tid: c.processor?.tid ?? '',
    amount: Number(c.amount),
    status: c.status,
    errorCode: c.error_code,
    returnCode: c.processor?.returnCode ?? '',
    returnMessage: c.processor?.returnMessage ?? '',
    attempt: c.attempt,
  }));
  const status = rebillStatusOf(r.state);
  const last = payments.at(-1);
  return {
    id: r.id.toUpperCase(),
    operation: 'rebill',
    status,
    statusVersion: r.version,
    errorCode: '',
    reference: r.reference,
    currency: r.currency.trim(),
    amount: Number(r.amount),
    capturedAmount: 0,
    cancelledAmount: 0,
    acquirer: r.acquirer,
    instalments: r.instalments,
    createdAt: new Date(r.created_at).toISOString(),
    processor: last
      ? {
          tid: last.tid,
          returnCode: last.returnCode,
          returnMessage: last.returnMessage || StatusMessages[last.status as TransactionStatus],
        }
      : {},
    tokenCard: r.token_card,
    payments,
    rebill: {
      state: r.state,
      period: r.period,
      frequency: r.frequency,
      dateStart: r.date_start,
      dateEnd: r.date_end,
      nextDate: nextChargeDate(r),
      cycles: latest.size,
      cardExpiresBeforeEnd: r.card_expires < r.date_end,
      suspendedReason: r.suspended_reason ?? undefined,
    },
  };
}
