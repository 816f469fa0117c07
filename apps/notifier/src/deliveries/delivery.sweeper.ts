import { Injectable, Logger, OnApplicationBootstrap, OnApplicationShutdown } from '@nestjs/common';
import { Queue } from 'bullmq';
import { DeliveriesRepository, OverdueCursor } from '@app/persistence';
import { PeriodicPass, safeErrorText } from '@app/platform';
import { MAX_ATTEMPTS } from '@app/webhooks';
import { enqueueDelivery } from '@app/webhooks/delivery';
import { NotifierConfig } from '../config/notifier.config';
import { measureHeldWith } from './delivery-metrics';

/**
 * No webhook is lost to a lost job. A delivery still pending well past its next attempt, or
 * sending for longer than an attempt can take, whose job is gone from the queue (Redis lost its
 * data, or the notifier stopped between recording a failed first attempt and queueing the retry),
 * is queued again to continue its schedule; one with no attempt left is marked failed (visible,
 * replayable). Postgres is the record; the queue only schedules.
 *
 * Nor is one left held: a retry that raced an enable (claimed as held just as the listener was
 * enabled, after the enable's release had passed it) stays held while its listener is enabled.
 * Each pass releases such deliveries held for longer than the grace (WEBHOOK_SWEEP_GRACE_S), oldest
 * first, at most a page of them, as an enable would (pending again, queued as a replay).
 */
/** Overdue deliveries looked at per pass. */
const PAGE = 200;

@Injectable()
export class DeliverySweeper implements OnApplicationBootstrap, OnApplicationShutdown {
  private readonly logger = new Logger(DeliverySweeper.name);
  private readonly periodic = new PeriodicPass(() => this.pass());
  private cursor?: OverdueCursor;

  constructor(
    private readonly deliveries: DeliveriesRepository,
    private readonly queue: Queue,
    private readonly config: NotifierConfig,
  ) {
    measureHeldWith(() => this.deliveries.heldSummary());
  }

  onApplicationBootstrap(): void {
    this.periodic.start(this.config.sweepIntervalMs);
  }

  async onApplicationShutdown(): Promise<void> {
    await this.periodic.stop();
  }

  /** One pass; returns how many deliveries it queued again (or failed, or released). */
  sweep(): Promise<number> {
    return this.periodic.run();
  }

  private async pass(): Promise<number> {
    let moved = 0;
    try {
      const graceS = this.config.sweepGraceS;
      // Overdue deliveries whose jobs still wait (a listener's backlog) may be many: each pass goes
      // on from where the last one stopped, so one with a lost job is reached however many are ahead.
      let page = await this.deliveries.overdue(graceS, Math.ceil(this.config.timeoutMs / 1000), PAGE, this.cursor);
      if (!page.length && this.cursor) page = await this.deliveries.overdue(graceS, Math.ceil(this.config.timeoutMs / 1000), PAGE);
      this.cursor = page.length === PAGE ? page[page.length - 1] : undefined;
      for (const d of page) {
        const jobId = d.replays ? `${d.id}-r${d.replays}` : d.id;
        const job = await this.queue.getJob(jobId);
        if (job && !(await job.isCompleted()) && !(await job.isFailed())) continue; // still scheduled
        if (job) await job.remove(); // a finished job under that id would block a new one
        moved++;
        // The schedule continues where it was (a replayed delivery starts its schedule afresh).
        const offset = d.replays ? 0 : d.attempts;
        if (offset >= MAX_ATTEMPTS) {
          await this.deliveries.markFailedIfOpen(d.id, 'no attempt left after its job was lost');
          continue;
        }
        await enqueueDelivery(this.queue, d, { replay: d.replays, offset });
        this.logger.warn({ deliveryId: d.id, attempts: d.attempts }, 'delivery without a job: queued again');
      }
      moved += await this.releaseStragglers(graceS);
    } catch (e) {
      this.logger.warn(`delivery sweep failed: ${safeErrorText(e)}`);
    }
    return moved;
  }

  /** Held deliveries whose listener is enabled: released oldest first, a page per pass. */
  private async releaseStragglers(graceS: number): Promise<number> {
    let released = 0;
    for (const d of await this.deliveries.heldStragglers(graceS, PAGE)) {
      const replay = await this.deliveries.release(d.id);
      if (replay === undefined) continue; // released meanwhile (an enable)
      await enqueueDelivery(this.queue, d, { replay });
      released++;
    }
    if (released) this.logger.warn({ released }, 'deliveries held while their listener is enabled: released');
    return released;
  }
}
