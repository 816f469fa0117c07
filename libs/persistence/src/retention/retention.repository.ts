import { DataSource, EntityManager } from 'typeorm';
import { RETENTION_LOCK } from '../migrations/1765700000000-retention';

/** The tables pruned by a batch of deletes; their ages and owners are libs/retention's policy. */
export type BatchPrunedTable =
  'idempotency_keys' | 'console_sessions' | 'portal_links' | 'audit_events' | 'outbox' | 'sandbox_calls' | 'deliveries';

/** Every table a retention rule prunes (docs/operations/retention.md): delivery_attempts by its day partitions. */
export type PrunedTable = BatchPrunedTable | 'delivery_attempts';

/**
 * The rows past the age of a table that deletes rows, a batch per short transaction: `past`
 * selects the rows older than the cutoff ($1) and is checked again on each row as it is deleted (a
 * row changed meanwhile, an idempotency key answered or a delivery replayed, is left); `order` is
 * the age its index reads the oldest first by; `key` the columns a row is deleted by.
 */
interface RowStatement {
  kind: 'rows';
  key: string;
  past: string;
  order: string;
  /** Deletes the rows that would stop the batch's rows from going (the CTE `gone` returns `key`). */
  also?: string;
}

/**
 * audit_events: append-only for every role (a trigger refuses DELETE), pruned only through
 * prune_audit_events($1 cutoff, $2 rows), a function of the owner's (migration 1766100000000) that
 * deletes a batch of events older than the cutoff (never younger than 30 days) and answers how
 * many, or -1 when another pass holds the table. `count` is what a dry run counts (the function's
 * own condition: an attempt whose outcome is younger than the cutoff stays).
 */
interface FunctionStatement {
  kind: 'function';
  call: string;
  count: string;
}

const STATEMENTS: Readonly<Record<BatchPrunedTable, RowStatement | FunctionStatement>> = {
  idempotency_keys: { kind: 'rows', key: 'merchant_id, key', past: 'created_at < $1', order: 'created_at' },
  console_sessions: {
    kind: 'rows',
    key: 'id_hash',
    past: 'LEAST(ended_at, expires_at) < $1',
    order: 'LEAST(ended_at, expires_at)',
  },
  portal_links: {
    kind: 'rows',
    key: 'id',
    past: 'LEAST(revoked_at, expires_at) < $1',
    order: 'LEAST(revoked_at, expires_at)',
  },
  audit_events: {
    kind: 'function',
    call: 'SELECT prune_audit_events($1, $2) AS n',
    count: `SELECT count(*) AS n FROM audit_events a
      WHERE a.at < $1 AND NOT EXISTS (SELECT 1 FROM audit_events o WHERE o.attempt_id = a.id AND o.at >= $1)`,
  },
  // An event not yet published has no published_at: never past any age.
  outbox: { kind: 'rows', key: 'id', past: 'published_at < $1', order: 'published_at' },
  // The sandbox's books are per authorization (tid): its calls go together, once the last of them
  // is past the age, so reconciling a transaction changed within the age still finds its authorization.
  sandbox_calls: {
    kind: 'rows',
    key: 'id',
    // A call with no authorization (a fence of a claim the acquirer never heard of) goes on its own age.
    past: `created_at < $1 AND (coalesce(tid, '') = '' OR NOT EXISTS (SELECT 1 FROM sandbox_calls later WHERE later.tid = sandbox_calls.tid AND later.created_at >= $1))`,
    order: 'created_at',
  },
  // Finished deliveries by their last change; the attempts are normally gone already (their days
  // dropped), the rest go with them.
  deliveries: {
    kind: 'rows',
    key: 'id',
    past: `status IN ('succeeded', 'failed', 'blocked') AND updated_at < $1`,
    order: 'updated_at',
    also: `, attempts AS (DELETE FROM delivery_attempts WHERE delivery_id IN (SELECT id FROM gone))`,
  },
};

/** A delivery_attempts partition dropped or created (or, dry, that would be), or left busy. */
export interface PartitionChange {
  partition: string;
  action: string;
  rows: number;
}

/** The table's pass lock, for the rest of the transaction; false when another session holds it. */
async function takeTableLock(tx: EntityManager, table: PrunedTable): Promise<boolean> {
  const [{ locked }]: { locked: boolean }[] = await tx.query('SELECT pg_try_advisory_xact_lock($1, hashtext($2)) AS locked', [
    RETENTION_LOCK,
    table,
  ]);
  return locked;
}

/**
 * The retention statements, run under the role of the app that owns the rule (or the
 * operator's, for retention:run). Each batch is its own short transaction that takes the table's
 * transaction-level advisory lock first, so two replicas never prune the same table at once, and
 * a PgBouncer in transaction mode is no obstacle.
 */
export class RetentionRepository {
  constructor(private readonly db: DataSource) {}

  /** Postgres's clock: the one the rows' times are taken on. */
  async databaseNow(): Promise<Date> {
    const [{ now }]: { now: Date }[] = await this.db.query('SELECT now() AS now');
    return now;
  }

  /** How many rows are past the cutoff (a dry run's count); changes nothing. */
  async countPast(table: BatchPrunedTable, cutoff: Date): Promise<number> {
    const s = STATEMENTS[table];
    const count = s.kind === 'function' ? s.count : `SELECT count(*) AS n FROM ${table} WHERE ${s.past}`;
    const [{ n }]: { n: string }[] = await this.db.query(count, [cutoff]);
    return Number(n);
  }

  /** Deletes one batch of at most `limit` rows past the cutoff; undefined when another pruner holds the table. */
  pruneBatch(table: BatchPrunedTable, cutoff: Date, limit: number): Promise<number | undefined> {
    const s = STATEMENTS[table];
    return s.kind === 'function' ? this.callBatch(s, cutoff, limit) : this.deleteBatch(table, s, cutoff, limit);
  }

  /**
   * delivery_attempts: drops the day partitions wholly before the cutoff and creates the days up
   * to `until` (dry: answers what it would do). Nothing answered: another session held the table.
   */
  async partitions(cutoff: Date, until: Date, dry: boolean): Promise<PartitionChange[]> {
    const rows: { partition: string; action: string; row_count: string }[] = await this.db.query(
      'SELECT partition, action, row_count FROM delivery_attempts_partitions($1, $2, $3)',
      [cutoff, until, dry],
    );
    return rows.map((r) => ({ partition: r.partition, action: r.action, rows: Number(r.row_count) }));
  }

  /** Whether the table's lock is held by another session now. */
  async heldElsewhere(table: PrunedTable): Promise<boolean> {
    return !(await this.db.transaction((tx) => takeTableLock(tx, table)));
  }

  private deleteBatch(table: BatchPrunedTable, s: RowStatement, cutoff: Date, limit: number): Promise<number | undefined> {
    return this.db.transaction(async (tx) => {
      if (!(await takeTableLock(tx, table))) return undefined;
      const [{ n }]: { n: number }[] = await tx.query(
        `WITH gone AS (
           DELETE FROM ${table} WHERE (${s.key}) IN (SELECT ${s.key} FROM ${table} WHERE ${s.past} ORDER BY ${s.order} LIMIT $2)
             AND ${s.past}
           RETURNING ${s.key}
         )${s.also ?? ''}
         SELECT count(*)::int AS n FROM gone`,
        [cutoff, limit],
      );
      return n;
    });
  }

  /** The function takes its own lock in its own transaction. */
  private async callBatch(s: FunctionStatement, cutoff: Date, limit: number): Promise<number | undefined> {
    const [{ n }]: { n: number }[] = await this.db.query(s.call, [cutoff, limit]);
    return n < 0 ? undefined : n;
  }
}
