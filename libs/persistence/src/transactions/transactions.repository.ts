import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { randomUUID } from 'node:crypto';
import { DataSource } from 'typeorm';
import { columns, inKeyOrder, runDistinctGroups, statementBatcher } from '../batching';
import { preparedStatement } from '../prepared';
import { saleDetailsJson } from './sale-details';
import { OPERATION_CODES } from './sale-snapshot';
import { changedRow, NewTransaction, OutboxEvent, ReconciliationRow, TransactionRow, Transition } from './transaction-rows';

interface PendingTransition {
  row: TransactionRow;
  change: Transition;
  out: OutboxEvent[];
}

/**
 * The columns of TransactionRow, named: a prepared statement's result may not change shape, so a
 * column added by a later migration must not break the statements of apps already running.
 */
const ROW_COLUMNS = `id, merchant_id, reference, operation, status, status_version, acquirer, method, instalments, currency, amount,
  captured_amount, cancelled_amount, masked_card, brand, token_card, error_code, processor, details, url_return, created_at,
  charged_back_amount, pending_operation_id, pending_kind, pending_amount`;

const FIND_BY_IDS = preparedStatement<TransactionRow>(
  'transactions_find_by_ids',
  `SELECT ${ROW_COLUMNS.replace(/(\w+)/g, 't.$1')} FROM transactions t JOIN unnest($1::uuid[], $2::uuid[]) AS k (id, merchant_id) ON t.id = k.id AND t.merchant_id = k.merchant_id`,
);

const INSERT_PENDING = preparedStatement<TransactionRow>(
  'transactions_insert_pending',
  `INSERT INTO transactions (id, merchant_id, reference, operation, status, acquirer, method, instalments, currency, amount,
     masked_card, brand, token_card, details, url_return)
   SELECT id, merchant_id, reference, operation, 0, acquirer, method, instalments, currency, amount, masked_card, brand, token_card, details, url_return
   FROM unnest($1::uuid[], $2::uuid[], $3::text[], $4::int[], $5::int[], $6::int[], $7::int[], $8::text[], $9::int8[], $10::text[], $11::text[], $12::text[], $13::jsonb[], $14::text[])
     AS i (id, merchant_id, reference, operation, acquirer, method, instalments, currency, amount, masked_card, brand, token_card, details, url_return)
   RETURNING ${ROW_COLUMNS}`,
);

/** Compare-and-set status changes and their outbox rows; returns the ids whose change won. */
const WRITE_TRANSITIONS = preparedStatement<{ aggregate_id: string }>(
  'transactions_write_transitions',
  `WITH input AS (
     SELECT * FROM unnest($1::uuid[], $2::int[], $3::int[], $4::int8[], $5::int8[], $6::text[], $7::jsonb[], $8::text[], $9::text[], $10::text[])
       AS i (id, version, status, captured_amount, cancelled_amount, error_code, processor, token_card, masked_card, brand)),
   updated AS (
     UPDATE transactions t SET
       status = i.status, status_version = t.status_version + 1,
       captured_amount = COALESCE(i.captured_amount, t.captured_amount), cancelled_amount = COALESCE(i.cancelled_amount, t.cancelled_amount),
       error_code = COALESCE(i.error_code, t.error_code), processor = t.processor || COALESCE(i.processor, '{}'::jsonb),
       token_card = COALESCE(i.token_card, t.token_card), masked_card = COALESCE(i.masked_card, t.masked_card), brand = COALESCE(i.brand, t.brand),
       updated_at = now()
     FROM input i WHERE t.id = i.id AND t.status_version = i.version RETURNING t.id),
   events AS (
     INSERT INTO outbox (id, event, aggregate_id, payload)
     SELECT e.id, e.event, updated.id, e.payload FROM updated JOIN unnest($11::uuid[], $12::uuid[], $13::text[], $14::jsonb[]) AS e (transaction_id, id, event, payload)
       ON e.transaction_id = updated.id)
   SELECT id AS aggregate_id FROM updated`,
);

/**
 * Transactions, always read scoped by merchant. A status changes only by compare-and-set on
 * `status_version`, in the same Postgres transaction as the outbox events it causes: either both
 * are written or neither, and of two concurrent changes exactly one wins.
 */
@Injectable()
export class TransactionsRepository {
  /** Concurrent reads by id go out as one statement (see statementBatcher). */
  private readonly findOne: (key: { merchantId: string; id: string }) => Promise<TransactionRow | undefined>;
  /** Concurrent status changes go out as one statement (see transitionMany). */
  private readonly transitionOne: (t: PendingTransition) => Promise<boolean>;
  private readonly insertOne: (t: NewTransaction) => Promise<TransactionRow>;

  constructor(@InjectDataSource() private readonly db: DataSource) {
    this.insertOne = statementBatcher((items) => this.insertMany(items));
    this.transitionOne = statementBatcher((items) => this.transitionMany(items));
    this.findOne = statementBatcher(async (keys) => {
      const rows = await FIND_BY_IDS(this.db, [keys.map((k) => k.id), keys.map((k) => k.merchantId)]);
      const byId = new Map(rows.map((r) => [r.id, r]));
      const handedOut = new Set<TransactionRow>();
      return keys.map((k) => {
        const row = byId.get(k.id.toLowerCase());
        if (!row || row.merchant_id !== k.merchantId.toLowerCase()) return undefined;
        // The same transaction read by several callers at once: each gets its own copy.
        if (handedOut.has(row)) return structuredClone(row);
        handedOut.add(row);
        return row;
      });
    });
  }

  /** Records a new sale at status 0; concurrent ones go out as one statement. */
  insertPending(t: NewTransaction): Promise<TransactionRow> {
    return this.insertOne(t);
  }

  private async insertMany(items: readonly NewTransaction[]): Promise<TransactionRow[]> {
    const rows = await INSERT_PENDING(
      this.db,
      columns(
        items,
        (t) => t.id,
        (t) => t.merchantId,
        (t) => t.reference,
        (t) => OPERATION_CODES[t.operation],
        (t) => t.acquirer,
        (t) => t.method,
        (t) => t.instalments,
        (t) => t.currency,
        (t) => t.amount,
        (t) => t.maskedCard,
        (t) => t.brand,
        (t) => t.tokenCard ?? null,
        (t) => saleDetailsJson(t.details),
        (t) => t.urlReturn ?? null,
      ),
    );
    const byId = new Map(rows.map((r) => [r.id, r]));
    return items.map((t) => byId.get(t.id.toLowerCase())!);
  }

  /** Removes a sale that was recorded but never sent (the queue was down, or the vault refused it). */
  async deletePending(merchantId: string, id: string): Promise<void> {
    await this.db.query('DELETE FROM transactions WHERE id = $1 AND merchant_id = $2 AND status = 0 AND status_version = 1', [
      id,
      merchantId,
    ]);
  }

  findByMerchantAndId(merchantId: string, id: string): Promise<TransactionRow | undefined> {
    return this.findOne({ merchantId, id });
  }

  async findLatestByMerchantAndReference(merchantId: string, reference: string): Promise<TransactionRow | undefined> {
    const rows: TransactionRow[] = await this.db.query(
      `SELECT ${ROW_COLUMNS} FROM transactions WHERE merchant_id = $1 AND reference = $2 ORDER BY created_at DESC, id DESC LIMIT 1`,
      [merchantId, reference],
    );
    return rows[0];
  }

  /**
   * One page (keyset on id) of decided transactions for acquirer:reconcile, optionally of one
   * merchant and changed since a time (or whose authorization the acquirer acted on since then:
   * `alsoTids`), with the time the operation holding one claimed it.
   */
  async pageForReconciliation(
    after: string,
    limit: number,
    scope: { merchantId?: string; since?: Date; alsoTids?: string[] },
  ): Promise<ReconciliationRow[]> {
    return this.db.query(
      `SELECT t.id, t.merchant_id, t.status, t.captured_amount, t.cancelled_amount, t.processor->>'tid' AS tid,
         t.processor->>'saleRef' AS sale_ref, t.acquirer, o.created_at AS held_since, t.updated_at
       FROM transactions t LEFT JOIN transaction_operations o ON o.id = t.pending_operation_id
       WHERE t.id > $1 AND t.status <> 0 AND ($2::uuid IS NULL OR t.merchant_id = $2)
         AND ($3::timestamptz IS NULL OR t.updated_at >= $3 OR t.processor->>'tid' = ANY($5::text[]))
       ORDER BY t.id LIMIT $4`,
      [after, scope.merchantId ?? null, scope.since ?? null, limit, scope.alsoTids ?? []],
    );
  }

  /**
   * Sales still at status 0 after `olderThanS` seconds, oldest first (for the reconciler). A
   * rebill's open charge is not one of them: the rebill scheduler sends its authorization again
   * until it is decided (a cancelled rebill's charge is then abandoned by the tokenizer), and an
   * abandon racing such a re-sent job could record a decline the acquirer approved.
   */
  findStalePending(olderThanS: number, limit: number): Promise<TransactionRow[]> {
    return this.db.query(
      `SELECT ${ROW_COLUMNS} FROM transactions t WHERE status = 0 AND created_at < now() - make_interval(secs => $1)
         AND NOT EXISTS (SELECT 1 FROM rebills r WHERE r.open_transaction_id = t.id)
       ORDER BY created_at LIMIT $2`,
      [olderThanS, limit],
    );
  }

  /**
   * Applies a status change if nobody changed the transaction since `row` was read, and records
   * its events in the outbox, in one statement (one round trip, one commit, shared with the
   * changes of other transactions made at the same time): either both are
   * written or neither, and of two concurrent changes exactly one wins. Returns the new row, or
   * undefined when another change won the race (the caller re-reads and decides). The new row is
   * the read row with the change applied, which the compare-and-set on status_version guarantees
   * is what Postgres now holds, so the events can be built from it before the write.
   */
  async transition(
    row: TransactionRow,
    change: Transition,
    events: (next: TransactionRow) => OutboxEvent[],
  ): Promise<TransactionRow | undefined> {
    const next = changedRow(row, change);
    return (await this.transitionOne({ row, change, out: events(next) })) ? next : undefined;
  }

  /**
   * Many status changes (each a compare-and-set with its outbox events) in one statement; per
   * change, whether it won. A transaction changed twice in one batch has its later changes made
   * after, one statement each, so each is judged against the version the one before left.
   */
  private async transitionMany(items: readonly PendingTransition[]): Promise<(boolean | Error)[]> {
    return runDistinctGroups(
      items,
      (t) => t.row.id,
      async (group) => {
        const written = await this.writeTransitions(group);
        return (t) => written.has(t.row.id);
      },
    );
  }

  /** One statement; the ids must be distinct. Returns the ids whose change won. */
  private async writeTransitions(unordered: readonly PendingTransition[]): Promise<Set<string>> {
    const group = inKeyOrder(unordered, (t) => t.row.id);
    const events = group.flatMap((t) => t.out.map((e) => ({ transactionId: t.row.id, event: e })));
    const written = await WRITE_TRANSITIONS(this.db, [
      ...columns(
        group,
        (t) => t.row.id,
        (t) => t.row.status_version,
        (t) => t.change.status,
        (t) => t.change.capturedAmount ?? null,
        (t) => t.change.cancelledAmount ?? null,
        (t) => t.change.errorCode ?? null,
        (t) => (t.change.processor ? JSON.stringify(t.change.processor) : null),
        (t) => t.change.tokenCard ?? null,
        (t) => t.change.maskedCard ?? null,
        (t) => t.change.brand ?? null,
      ),
      ...columns(
        events,
        (e) => e.transactionId,
        () => randomUUID(),
        (e) => e.event.event,
        (e) => JSON.stringify(e.event.payload),
      ),
    ]);
    return new Set(written.map((w) => w.aggregate_id));
  }
}
