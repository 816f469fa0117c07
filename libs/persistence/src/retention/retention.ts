import { Logger, OnApplicationBootstrap, OnApplicationShutdown } from '@nestjs/common';
import { DataSource, EntityManager } from 'typeorm';
import { PeriodicPass, RetentionConfig, retentionRowsPruned } from '@app/platform';
import { safeErrorText } from '@app/platform/safe-error';
import { RETENTION_LOCK } from '../migrations/1765700000000-retention';
import type { RoleOwner } from '../roles';

/** The tables a retention rule prunes (docs/OPERATIONS.md "Retention"). */
export type PrunedTable =
  | 'idempotency_keys'
  | 'console_sessions'
  | 'portal_links'
  | 'audit_events'
  | 'outbox'
  | 'sandbox_calls'
  | 'deliveries'
  | 'delivery_attempts';

/** Which app's pass runs each rule (under that app's role); the operator's retention:run runs any. */
export const RETENTION_OWNERS: Readonly<Record<PrunedTable, RoleOwner>> = {
  idempotency_keys: 'api',
  console_sessions: 'api',
  portal_links: 'api',
  audit_events: 'api',
  outbox: 'tokenizer',
  sandbox_calls: 'tokenizer',
  deliveries: 'notifier',
  delivery_attempts: 'notifier',
};
export const PRUNED_TABLES = Object.keys(RETENTION_OWNERS) as PrunedTable[];

/**
 * A rule that deletes rows, a batch per short transaction: `past` selects the rows older than the
 * cutoff ($1) and is checked again on each row as it is deleted (a row changed meanwhile, an
 * idempotency key answered or a delivery replayed, is left); `order` is the age its index reads
 * the oldest first by; `key` the columns a row is deleted by.
 */
interface RowRule {
  kind: 'rows';
  age: (c: RetentionConfig) => number;
  key: string;
  past: string;
  order: string;
  /** Deletes the rows that would stop the batch's rows from going (the CTE `gone` returns `key`). */
  also?: string;
}

/** delivery_attempts: its day partitions wholly past the age are dropped, and days ahead created. */
interface PartitionRule {
  kind: 'partitions';
  age: (c: RetentionConfig) => number;
}

/**
 * audit_events: append-only for every role (a trigger refuses DELETE), pruned only through
 * prune_audit_events($1 cutoff, $2 rows), a function of the owner's (migration 1766100000000) that
 * deletes a batch of events older than the cutoff (never younger than 30 days) and answers how
 * many, or -1 when another pass holds the table. `count` is what a dry run counts (the function's
 * own condition: an attempt whose outcome is younger than the cutoff stays).
 */
interface FunctionRule {
  kind: 'function';
  age: (c: RetentionConfig) => number;
  call: string;
  count: string;
}

const RULES: Readonly<Record<PrunedTable, RowRule | PartitionRule | FunctionRule>> = {
  // The API answers a replayed Idempotency-Key for 24 h (the setting cannot go below that).
  idempotency_keys: {
    kind: 'rows',
    age: (c) => c.idempotencyKeysMs,
    key: 'merchant_id, key',
    past: 'created_at < $1',
    order: 'created_at',
  },
  console_sessions: {
    kind: 'rows',
    age: (c) => c.consoleSessionsMs,
    key: 'id_hash',
    past: 'LEAST(ended_at, expires_at) < $1',
    order: 'LEAST(ended_at, expires_at)',
  },
  portal_links: {
    kind: 'rows',
    age: (c) => c.portalLinksMs,
    key: 'id',
    past: 'LEAST(revoked_at, expires_at) < $1',
    order: 'LEAST(revoked_at, expires_at)',
  },
  audit_events: {
    kind: 'function',
    age: (c) => c.auditMs,
    call: 'SELECT prune_audit_events($1, $2) AS n',
    count: `SELECT count(*) AS n FROM audit_events a
      WHERE a.at < $1 AND NOT EXISTS (SELECT 1 FROM audit_events o WHERE o.attempt_id = a.id AND o.at >= $1)`,
  },
  // An event not yet published has no published_at: never past any age.
  outbox: { kind: 'rows', age: (c) => c.outboxMs, key: 'id', past: 'published_at < $1', order: 'published_at' },
  // The sandbox's books are per authorization (tid): its calls go together, once the last of them
  // is past the age, so reconciling a transaction changed within the age still finds its authorization.
  sandbox_calls: {
    kind: 'rows',
    age: (c) => c.sandboxCallsMs,
    key: 'id',
    // A call with no authorization (a fence of a claim the acquirer never heard of) goes on its own age.
    past: `created_at < $1 AND (coalesce(tid, '') = '' OR NOT EXISTS (SELECT 1 FROM sandbox_calls later WHERE later.tid = sandbox_calls.tid AND later.created_at >= $1))`,
    order: 'created_at',
  },
  // Finished deliveries by their last change; the attempts are normally gone already (their days
  // dropped), the rest go with them.
  deliveries: {
    kind: 'rows',
    age: (c) => c.deliveriesMs,
    key: 'id',
    past: `status IN ('succeeded', 'failed', 'blocked') AND updated_at < $1`,
    order: 'updated_at',
    also: `, attempts AS (DELETE FROM delivery_attempts WHERE delivery_id IN (SELECT id FROM gone))`,
  },
  delivery_attempts: { kind: 'partitions', age: (c) => c.deliveryAttemptsMs },
};

/** The table's pass lock, for the rest of the transaction; false when another session holds it. */
async function takeTableLock(tx: EntityManager, table: PrunedTable): Promise<boolean> {
  const [{ locked }]: { locked: boolean }[] = await tx.query('SELECT pg_try_advisory_xact_lock($1, hashtext($2)) AS locked', [
    RETENTION_LOCK,
    table,
  ]);
  return locked;
}

/** Days of delivery_attempts partitions kept ready ahead of now. */
export const PARTITION_DAYS_AHEAD = 7;

/** What one table's pass did (or, dry, would do). */
export interface TablePass {
  table: PrunedTable;
  /** Rows deleted (or dropped with their partition); dry: rows past the age. */
  rows: number;
  /** Another replica held the table's pass: this one left it. */
  skipped?: boolean;
  /** delivery_attempts: partitions dropped and created (dry: that would be), and any left busy. */
  partitions?: { partition: string; action: string; rows: number }[];
}

/**
 * Runs the retention rules of some tables: batched deletes in short transactions (each takes the
 * table's transaction-level advisory lock first, so two replicas never prune the same table at
 * once, and a PgBouncer in transaction mode is no obstacle), and delivery_attempts' partitions.
 * Runs under the role of the app that owns the rule (or the operator's, for retention:run).
 */
export class RetentionPruner implements OnApplicationBootstrap, OnApplicationShutdown {
  private readonly logger = new Logger(RetentionPruner.name);
  private stopping = false;
  private readonly periodic = new PeriodicPass(async () => (await this.run()).reduce((n, t) => n + t.rows, 0));

  constructor(
    private readonly db: DataSource,
    private readonly tables: readonly PrunedTable[],
    private readonly config: RetentionConfig,
  ) {}

  /** The pruner of the rules `owner` runs. */
  static of(owner: RoleOwner, db: DataSource, config: RetentionConfig): RetentionPruner {
    return new RetentionPruner(
      db,
      PRUNED_TABLES.filter((t) => RETENTION_OWNERS[t] === owner),
      config,
    );
  }

  onApplicationBootstrap(): void {
    // At boot too: the notifier makes sure the coming days have their partitions before it writes.
    void this.periodic.run();
    this.periodic.start(this.config.intervalMs);
  }

  async onApplicationShutdown(): Promise<void> {
    // A pass working through a long backlog stops after its current batch: a SIGTERM is not held
    // up for the rest of it (the next pass, here or on another replica, takes it up).
    this.stopping = true;
    await this.periodic.stop();
  }

  /** One pass over every table (or joins the one running); resolves with rows removed. */
  pass(): Promise<number> {
    return this.periodic.run();
  }

  /** Each table's rule once, now; `dry` counts what is past its age and changes nothing. */
  async run(opts: { dry?: boolean; now?: Date } = {}): Promise<TablePass[]> {
    const out: TablePass[] = [];
    // Ages are counted on Postgres's clock, the one the rows' times and the api's 24 h replay
    // window are taken on: an app host whose clock runs fast never prunes a key early.
    let now: Date;
    try {
      now = opts.now ?? (await this.databaseNow());
    } catch (e) {
      // Postgres down: the next pass tries again.
      this.logger.warn(`retention pass not started: ${safeErrorText(e)}`);
      if (opts.dry) throw e;
      return out;
    }
    for (const table of this.tables) {
      if (this.stopping) break;
      try {
        const done = await this.runTable(table, opts.dry ?? false, now);
        if (!opts.dry && done.rows) retentionRowsPruned.inc({ table }, done.rows);
        out.push(done);
      } catch (e) {
        // Postgres down or a statement refused: the next pass tries again; the other tables go on.
        this.logger.warn(`retention of ${table} failed: ${safeErrorText(e)}`);
        if (opts.dry) throw e;
      }
    }
    const pruned = out.filter((t) => t.rows);
    if (!opts.dry && pruned.length) this.logger.log({ pruned: Object.fromEntries(pruned.map((t) => [t.table, t.rows])) }, 'retention pass');
    return out;
  }

  private async runTable(table: PrunedTable, dry: boolean, now: Date): Promise<TablePass> {
    const rule = RULES[table];
    const cutoff = new Date(now.getTime() - rule.age(this.config));
    if (rule.kind === 'partitions') {
      const until = new Date(now.getTime() + PARTITION_DAYS_AHEAD * 86_400_000);
      const rows: { partition: string; action: string; row_count: string }[] = await this.db.query(
        'SELECT partition, action, row_count FROM delivery_attempts_partitions($1, $2, $3)',
        [cutoff, until, dry],
      );
      const partitions = rows.map((r) => ({ partition: r.partition, action: r.action, rows: Number(r.row_count) }));
      const dropped = partitions.filter((p) => p.action === 'drop').reduce((n, p) => n + p.rows, 0);
      const skipped = !dry && rows.length === 0 ? await this.heldElsewhere(table) : undefined;
      return { table, rows: dropped, partitions, ...(skipped ? { skipped } : {}) };
    }
    if (dry) {
      const count = rule.kind === 'function' ? rule.count : `SELECT count(*) AS n FROM ${table} WHERE ${rule.past}`;
      const [{ n }]: { n: string }[] = await this.db.query(count, [cutoff]);
      return { table, rows: Number(n) };
    }
    let rows = 0;
    for (;;) {
      const batch = rule.kind === 'function' ? await this.callBatch(rule, cutoff) : await this.deleteBatch(table, rule, cutoff);
      if (batch === undefined) return { table, rows, skipped: true };
      rows += batch;
      if (batch < this.config.batchRows || this.stopping) return { table, rows };
    }
  }

  private async databaseNow(): Promise<Date> {
    const [{ now }]: { now: Date }[] = await this.db.query('SELECT now() AS now');
    return now;
  }

  /** One batch in its own transaction; undefined when another pruner holds the table. */
  private deleteBatch(table: PrunedTable, rule: RowRule, cutoff: Date): Promise<number | undefined> {
    return this.db.transaction(async (tx) => {
      if (!(await takeTableLock(tx, table))) return undefined;
      const [{ n }]: { n: number }[] = await tx.query(
        `WITH gone AS (
           DELETE FROM ${table} WHERE (${rule.key}) IN (SELECT ${rule.key} FROM ${table} WHERE ${rule.past} ORDER BY ${rule.order} LIMIT $2)
             AND ${rule.past}
           RETURNING ${rule.key}
         )${rule.also ?? ''}
         SELECT count(*)::int AS n FROM gone`,
        [cutoff, this.config.batchRows],
      );
      return n;
    });
  }

  /** One batch of a function rule (its own transaction, its own lock); undefined when another pruner holds the table. */
  private async callBatch(rule: FunctionRule, cutoff: Date): Promise<number | undefined> {
    const [{ n }]: { n: number }[] = await this.db.query(rule.call, [cutoff, this.config.batchRows]);
    return n < 0 ? undefined : n;
  }

  /** Whether the table's lock is held by another session now (the partition function returned nothing). */
  private async heldElsewhere(table: PrunedTable): Promise<boolean> {
    return !(await this.db.transaction((tx) => takeTableLock(tx, table)));
  }
}
