import { PeriodicPass } from './periodic-pass';
import { safeErrorText } from './safe-error';

/** Where a sweep stopped: the last outbox row it looked at (keyset published_at, id). */
export interface PublishedCursor {
  /** published_at as Postgres prints it (microseconds kept). */
  publishedAt: string;
  id: string;
}

export interface PublishedSweepOptions<R extends PublishedCursor> {
  /** The rows published after `after` and by `upTo`, oldest first, at most `limit`. */
  read(after: PublishedCursor, upTo: Date, limit: number): Promise<R[]>;
  /** Repairs what the page's rows say is missing; resolves with how many it repaired; throws to retry the page. */
  repair(page: R[]): Promise<number>;
  /** How long after its publication an event's own delivery is given before the sweep steps in. */
  graceS: number;
  /** How far back the sweep starts when the process starts. */
  horizonS: number;
  intervalMs: number;
  /** Told when a pass fails (it is tried again from the same place) and how many a pass repaired. */
  logger: { warn(fields: Record<string, unknown>, message: string): void };
  /** The warning for a pass that repaired something. */
  repairedMessage: string;
  page?: number;
}

/**
 * The shape of the sweeps that repair what a lost event left undone: the outbox is the record of
 * every event, and a sweep walks what it published (after a grace, so the events' own delivery
 * and retries come first), from a cursor that starts `horizonS` back when the process starts, a
 * page at a time until it has caught up. The cursor moves past a page only once the page was
 * repaired: a pass that fails (Postgres down) leaves it, and the next tries the same rows again.
 * Repairs must be idempotent: two replicas sweep the same rows, and a late event may come too.
 */
export class PublishedSweep<R extends PublishedCursor> {
  private readonly periodic = new PeriodicPass(() => this.pass());
  private cursor: PublishedCursor;
  private stopping = false;

  constructor(private readonly o: PublishedSweepOptions<R>) {
    // A subclass's own fields are not set yet here: the options hold everything the sweep needs.
    this.cursor = { publishedAt: new Date(Date.now() - o.horizonS * 1000).toISOString(), id: '00000000-0000-0000-0000-000000000000' };
  }

  /** Started with the app (a Nest lifecycle hook: a worker's sweeper extends this class). */
  onApplicationBootstrap(): void {
    this.periodic.start(this.o.intervalMs);
  }

  /** A pass catching up stops after its page; the next process goes on from its own horizon. */
  async onApplicationShutdown(): Promise<void> {
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
        repaired += await this.o.repair(page);
        if (page.length) this.cursor = { publishedAt: page[page.length - 1].publishedAt, id: page[page.length - 1].id };
        if (page.length < size) break;
      }
    } catch (e) {
      this.o.logger.warn({}, `sweep stopped (the next pass goes on from the same place): ${safeErrorText(e)}`);
    }
    if (repaired) this.o.logger.warn({ repaired }, this.o.repairedMessage);
    return repaired;
  }
}

/** Runs every repair side by side; resolves with how many succeeded, or throws the first failure once all have ended. */
export async function allRepaired(repairs: Promise<boolean>[]): Promise<number> {
  const outcomes = await Promise.allSettled(repairs);
  const rejected = outcomes.find((o): o is PromiseRejectedResult => o.status === 'rejected');
  if (rejected) throw rejected.reason;
  return outcomes.filter((o) => o.status === 'fulfilled' && o.value).length;
}
