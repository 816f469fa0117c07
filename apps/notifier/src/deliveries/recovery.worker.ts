import { Injectable, Logger, OnApplicationBootstrap, OnApplicationShutdown } from '@nestjs/common';
import { DelayedError, Job, Queue, Worker } from 'bullmq';
import { RecoveriesRepository } from '@app/persistence';
import { PeriodicPass, type RedisConnection, safeErrorText } from '@app/platform';
import { queueOn } from '@app/messaging';
import { enqueueRecovery, RECOVERY_QUEUE, RecoveryJob, runRecovery } from '@app/webhooks/delivery';
import { NotifierConfig } from '../config/notifier.config';

/** Running recoveries looked at per sweep. */
const SWEEP_PAGE = 100;

/**
 * Runs recoveries (bulk replays started by the console's Recover page or webhooks:replay
 * --merchant): one job per recovery on a queue every notifier replica consumes, each job running
 * its recovery a page at a time to the end (runRecovery). A notifier killed mid-run leaves the
 * job stalled: BullMQ gives it to another replica (or to this one restarted) after its lock runs
 * out (~10 s), and it goes on from the recovery's cursor. A notifier shutting down puts its jobs
 * back at once (between two pages). A running recovery no step has moved for a minute whose job
 * is gone (Redis lost it) is queued again by the sweep.
 */
@Injectable()
export class RecoveryWorker implements OnApplicationBootstrap, OnApplicationShutdown {
  private readonly logger = new Logger(RecoveryWorker.name);
  private readonly queue: Queue;
  private readonly periodic = new PeriodicPass(() => this.sweep());
  private worker?: Worker<RecoveryJob>;
  private closing = false;

  constructor(
    private readonly recoveries: RecoveriesRepository,
    private readonly deliveryQueue: Queue,
    private readonly config: NotifierConfig,
  ) {
    // The delivery queue's connection, with the recovery queue's own key prefix (hash tag on a cluster).
    this.queue = new Queue(RECOVERY_QUEUE, this.where()).on('error', () => undefined);
  }

  onApplicationBootstrap(): void {
    this.worker = new Worker<RecoveryJob>(RECOVERY_QUEUE, (job, token) => this.run(job, token), {
      ...this.where(),
      concurrency: 4,
      lockDuration: 10_000,
      stalledInterval: 10_000,
      maxStalledCount: 5,
    });
    this.worker.on('error', (e) => this.logger.warn(`recovery worker: ${safeErrorText(e)}`));
    this.worker.on('failed', (job, err) => {
      if (!job || job.attemptsMade < (job.opts.attempts ?? 1)) return;
      this.recoveries
        .fail(job.data.recoveryId, err.message)
        .catch((e) => this.logger.warn(`recovery ${job.data.recoveryId}: ${safeErrorText(e)}`));
    });
    this.periodic.start(this.config.sweepIntervalMs);
  }

  private where() {
    return queueOn(this.deliveryQueue.opts.connection as RedisConnection, this.config.base.queuePrefix, RECOVERY_QUEUE);
  }

  async onApplicationShutdown(): Promise<void> {
    this.closing = true;
    await this.periodic.stop();
    await this.worker?.close();
    await this.queue.close();
  }

  private async run(job: Job<RecoveryJob>, token?: string): Promise<void> {
    const id = job.data.recoveryId;
    const state = await runRecovery(this.recoveries, this.deliveryQueue, id, {
      pageSize: this.config.recoveryPageSize,
      pauseMs: this.config.recoveryPauseMs,
      onPage: async () => {
        if (!this.closing) return;
        // Back to the queue without spending an attempt: another replica goes on from the cursor.
        await job.moveToDelayed(Date.now(), token);
        throw new DelayedError();
      },
    });
    this.logger.log({ recoveryId: id, state: state ?? 'unknown' }, 'recovery ended');
  }

  /** Queues again the running recoveries that have not moved for a minute and have no job. */
  private async sweep(): Promise<number> {
    let queued = 0;
    try {
      const idleS = 60 + Math.ceil(this.config.recoveryPauseMs / 1000);
      for (const id of await this.recoveries.idle(idleS, SWEEP_PAGE)) {
        const job = await this.queue.getJob(id);
        if (job && !(await job.isCompleted()) && !(await job.isFailed())) continue; // waiting or running
        if (job) await job.remove();
        await enqueueRecovery(this.queue, id);
        queued++;
        this.logger.warn({ recoveryId: id }, 'running recovery without a job: queued again');
      }
    } catch (e) {
      this.logger.warn(`recovery sweep failed: ${safeErrorText(e)}`);
    }
    return queued;
  }
}
