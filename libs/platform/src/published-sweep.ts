import { PeriodicPass } from './periodic-pass';
import { safeErrorText } from './safe-error';

/** Where a sweep stopped: the last outbox row it looked at (keyset published_at, id). */
export interface PublishedCursor {
  /** published_at in UTC, ISO 8601 with microseconds (PUBLISHED_AT_TEXT), whatever the session's DateStyle. */
  publishedAt: string;
  id: string;
}

/** published_at as a PublishedCursor carries it: `to_char` in UTC, so it reads back exactly in any session. */
export const PUBLISHED_AT_TEXT = `to_char(o.published_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"')`;

/** Passes in a row a row may fail while others beside it are repaired, before the sweep gives up on it. */
const MAX_FAILED_PASSES = 5;

export interface PublishedSweepOptions<R extends PublishedCursor> {
  /** The rows published after `after` and by `upTo`, oldest first, at most `limit`. */
  read(after: PublishedCursor, upTo: Date, limit: number): Promise<R[]>;
  /** Repairs what the row says is missing: true when it wrote something, false when nothing was missing. */
  repair(row: R): Promise<boolean>;
  /** How long after its publication an event's own delivery is given before the sweep steps in. */
  graceS: number;
  /** How far back the sweep starts when the process starts. */
  horizonS: number;
  intervalMs: number;
  logger: { warn(fields: Record<string, unknown>, message: string): void; error(fields: Record<string, unknown>, message: string): void };
  /** The warning for a pass that repaired something. */
  repairedMessage: string;
  /** Told how many rows a page repaired, and of each row given up on. */
  counted?(outcome: 'repaired' | 'given_up', rows: number): void;
  page?: number;
}

/**
 * The shape of the sweeps that repair what a lost event left undone: the outbox is the record of
 * every event, and a sweep walks what it published (after a grace, so the events' own delivery and
 * retries come first), from a cursor that starts `horizonS` back when the process starts, a page
 * at a time until it has caught up, repairing the rows of a page side by side.
 *
 * The cursor moves past a row only once it is repaired: a pass that fails (Postgres down) leaves
 * it, and the next tries the same rows again. A row that keeps failing while the rows beside it
 * are repaired (a malformed event) is given up on after MAX_FAILED_PASSES passes, with an error
 * naming it, so that one row cannot hold the sweep back. Repairs must be idempotent: replicas sweep
 * the same rows, and a late event may come too.
 */
export class PublishedSweep<R extends PublishedCursor> {
  private readonly periodic = new PeriodicPass(() => this.pass());
  private cursor: PublishedCursor;
  private stopping = false;
  private readonly failedPasses = new Map<string, number>();

  constructor(private readonly o: PublishedSweepOptions<R>) {
    // A subclass's own fields are not set yet here: the options hold everything the sweep needs.
    this.cursor = { publishedAt: new Date(Date.now() - o.horizonS * 1000).toISOString(), id: '00000000-0000-0000-0000-000000000000' };
  }

  /** Started with the app (a Nest lifecycle hook: a worker's sweeper extends this class). */
  onApplicationBootstrap(): void {
    this.periodic.start(this.o.intervalMs);
  }

  /**
   * Before any provider's shutdown (the repairs use the app's other services, which close in
   * theirs): a pass catching up stops after its page; the next process goes on from its own horizon.
   */
  async beforeApplicationShutdown(): Promise<void> {
    this.stopping = true;
    await this.periodic.stop();
  }

  /** One pass now (or the one in flight); resolves with how many rows it repaired. */
  run(): Promise<number> {
    return this.periodic.run();
  }

  private async pass(): Promise<number> {
    const size = this.o.page ?? 500;
    let repaired = 0;
    try {
      const upTo = new Date(Date.now() - this.o.graceS * 1000);
      while (!this.stopping) {
        const page = await this.o.read(this.cursor, upTo, size);
        const outcomes = await Promise.allSettled(page.map((row) => this.o.repair(row)));
        const done = outcomes.filter((o) => o.status === 'fulfilled' && o.value).length;
        if (done) this.o.counted?.('repaired', done);
        repaired += done;
        const stuck = this.firstStuck(page, outcomes);
        if (stuck) {
          if (stuck.at > 0) this.cursor = cursorOf(page[stuck.at - 1]);
          throw stuck.error;
        }
        if (page.length) this.cursor = cursorOf(page[page.length - 1]);
        if (page.length < size) break;
      }
    } catch (e) {
      this.o.logger.warn({}, `sweep stopped (the next pass goes on from the same place): ${safeErrorText(e)}`);
    }
    if (repaired) this.o.logger.warn({ repaired }, this.o.repairedMessage);
    return repaired;
  }

  /**
   * The first failed row the sweep must try again (undefined: none). A row that failed beside rows
   * that were repaired counts a failed pass, and past MAX_FAILED_PASSES it is given up on; when
   * every row failed (Postgres down, say) nothing counts.
   */
  private firstStuck(page: R[], outcomes: PromiseSettledResult<boolean>[]): { at: number; error: unknown } | undefined {
    const someRepaired = outcomes.some((o) => o.status === 'fulfilled');
    for (let i = 0; i < page.length; i++) {
      const outcome = outcomes[i];
      if (outcome.status === 'fulfilled') {
        this.failedPasses.delete(page[i].id);
        continue;
      }
      const passes = (this.failedPasses.get(page[i].id) ?? 0) + (someRepaired ? 1 : 0);
      if (passes < MAX_FAILED_PASSES) {
        this.failedPasses.set(page[i].id, passes);
        return { at: i, error: outcome.reason };
      }
      this.failedPasses.delete(page[i].id);
      this.o.counted?.('given_up', 1);
      this.o.logger.error(
        { outboxId: page[i].id, error: safeErrorText(outcome.reason) },
        `sweep gave up on an outbox row after ${MAX_FAILED_PASSES} passes failed on it while the rows beside it were repaired`,
      );
    }
    return undefined;
  }
}

const cursorOf = (row: PublishedCursor): PublishedCursor => ({ publishedAt: row.publishedAt, id: row.id });
