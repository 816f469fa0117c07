import { Logger, OnApplicationBootstrap, OnApplicationShutdown } from '@nestjs/common';
import { PeriodicPass, RetentionConfig, retentionRowsPruned } from '@app/platform';
import { safeErrorText } from '@app/platform/safe-error';
import type { PartitionChange, PrunedTable, RetentionRepository, RoleOwner } from '@app/persistence';

/** Which app's pass runs each rule (under that app's role); the operator's retention:run runs any. */
export const RETENTION_OWNERS: Readonly<Record<PrunedTable, RoleOwner>> = {
  idempotency_keys: 'api',
  console_sessions: 'console',
  portal_links: 'console',
  audit_events: 'console',
  outbox: 'tokenizer',
  sandbox_calls: 'tokenizer',
  deliveries: 'notifier',
  delivery_attempts: 'notifier',
};
export const PRUNED_TABLES = Object.keys(RETENTION_OWNERS) as PrunedTable[];

/** How old a table's rows are when they go (what "past" means for each is the repository's statement). */
const AGES: Readonly<Record<PrunedTable, (c: RetentionConfig) => number>> = {
  // The API answers a replayed Idempotency-Key for 24 h (the setting cannot go below that).
  idempotency_keys: (c) => c.idempotencyKeysMs,
  console_sessions: (c) => c.consoleSessionsMs,
  portal_links: (c) => c.portalLinksMs,
  audit_events: (c) => c.auditMs,
  outbox: (c) => c.outboxMs,
  sandbox_calls: (c) => c.sandboxCallsMs,
  deliveries: (c) => c.deliveriesMs,
  // Its day partitions wholly past the age are dropped, and days ahead created.
  delivery_attempts: (c) => c.deliveryAttemptsMs,
};

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
  partitions?: PartitionChange[];
}

/**
 * Runs the retention rules of some tables: batches of deletes until a batch comes back short, and
 * delivery_attempts' partitions; each batch is a short transaction under the table's lock (see
 * RetentionRepository). Runs under the role of the app that owns the rule (or the operator's, for
 * retention:run).
 */
export class RetentionPruner implements OnApplicationBootstrap, OnApplicationShutdown {
  private readonly logger = new Logger(RetentionPruner.name);
  private stopping = false;
  private readonly periodic = new PeriodicPass(async () => (await this.run()).reduce((n, t) => n + t.rows, 0));

  constructor(
    private readonly retention: RetentionRepository,
    private readonly tables: readonly PrunedTable[],
    private readonly config: RetentionConfig,
  ) {}

  /** The pruner of the rules `owner` runs. */
  static of(owner: RoleOwner, retention: RetentionRepository, config: RetentionConfig): RetentionPruner {
    return new RetentionPruner(
      retention,
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
      now = opts.now ?? (await this.retention.databaseNow());
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
    const cutoff = new Date(now.getTime() - AGES[table](this.config));
    if (table === 'delivery_attempts') {
      const until = new Date(now.getTime() + PARTITION_DAYS_AHEAD * 86_400_000);
      const partitions = await this.retention.partitions(cutoff, until, dry);
      const dropped = partitions.filter((p) => p.action === 'drop').reduce((n, p) => n + p.rows, 0);
      const skipped = !dry && partitions.length === 0 ? await this.retention.heldElsewhere(table) : undefined;
      return { table, rows: dropped, partitions, ...(skipped ? { skipped } : {}) };
    }
    if (dry) return { table, rows: await this.retention.countPast(table, cutoff) };
    let rows = 0;
    for (;;) {
      const batch = await this.retention.pruneBatch(table, cutoff, this.config.batchRows);
      if (batch === undefined) return { table, rows, skipped: true };
      rows += batch;
      if (batch < this.config.batchRows || this.stopping) return { table, rows };
    }
  }
}
