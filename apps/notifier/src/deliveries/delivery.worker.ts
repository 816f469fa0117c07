import { Injectable, Logger, OnApplicationBootstrap, OnApplicationShutdown } from '@nestjs/common';
import { DelayedError, Job, Queue, UnrecoverableError, Worker } from 'bullmq';
import { DeliveriesRepository, WebhookSecrets } from '@app/persistence';
import { DELIVERY_QUEUE, DeliveryJob, MAX_ATTEMPTS, retryDelayMs, WEBHOOK_BACKOFF } from '@app/webhooks';
import { NotifierConfig } from '../config/notifier.config';
import { attemptDuration, deliveryOutcomes, measureOldestPendingWith } from './delivery-metrics';
import { WebhookSender } from './webhook-sender';

/** A failed attempt that should be retried after `delayMs` (the schedule, or the listener's Retry-After). */
class RetryLater extends Error {
  constructor(
    message: string,
    readonly delayMs: number,
  ) {
    super(message);
  }
}

/**
 * Works the delivery queue: one attempt per job run, recorded in Postgres; BullMQ re-runs the job
 * on the DESIGN.md 4 schedule (a custom backoff strategy) until an attempt succeeds, the listener
 * answers 410, or the schedule is exhausted. At most `perDestination` attempts run against one
 * host at a time; a job over that cap goes back to the queue for a moment without spending an
 * attempt, so one slow listener never holds every worker slot.
 */
@Injectable()
export class DeliveryWorker implements OnApplicationBootstrap, OnApplicationShutdown {
  private readonly logger = new Logger(DeliveryWorker.name);
  private worker?: Worker<DeliveryJob>;
  private readonly sender: WebhookSender;
  private readonly inFlight = new Map<string, number>();
  private readonly secrets = new Map<string, { value: WebhookSecrets; expiresAt: number }>();

  constructor(
    private readonly deliveries: DeliveriesRepository,
    private readonly config: NotifierConfig,
    readonly queue: Queue,
  ) {
    this.sender = new WebhookSender(config.allowNetworks, config.timeoutMs);
    measureOldestPendingWith(() => this.deliveries.oldestOpenAgeSeconds());
  }

  onApplicationBootstrap(): void {
    this.worker = new Worker<DeliveryJob>(DELIVERY_QUEUE, (job, token) => this.attempt(job, token), {
      connection: this.queue.opts.connection,
      prefix: this.queue.opts.prefix,
      concurrency: this.config.concurrency,
      // A killed notifier's attempts come back after at most ~10 s (the lock is renewed while alive).
      lockDuration: 10_000,
      stalledInterval: 10_000,
      maxStalledCount: 5,
      settings: {
        backoffStrategy: (attemptsMade: number, type?: string, err?: Error) =>
          type === WEBHOOK_BACKOFF && err instanceof RetryLater ? err.delayMs : retryDelayMs(attemptsMade, this.config.scheduleScale),
      },
    });
    this.worker.on('error', (e) => this.logger.warn(`delivery worker: ${e.message}`));
    // A last run that failed for another reason than the listener (Postgres down, no merchant):
    // the delivery must not stay pending/sending forever; failed, it is visible and replayable.
    this.worker.on('failed', (job, err) => {
      if (!job || err instanceof UnrecoverableError || job.attemptsMade < (job.opts.attempts ?? MAX_ATTEMPTS)) return;
      this.deliveries.markFailedIfOpen(job.data.deliveryId, err.message).catch((e) => this.logger.warn(`delivery ${job.data.deliveryId}: ${(e as Error).message}`));
    });
  }

  async onApplicationShutdown(): Promise<void> {
    // Waits for attempts in flight, so a deploy never cuts one in half.
    await this.worker?.close();
    this.sender.close();
  }

  private async attempt(job: Job<DeliveryJob>, token?: string): Promise<void> {
    // Over the host's cap: step back without spending an attempt (checked before any read, so a
    // backlog for one slow host costs neither Postgres nor a busy loop).
    if (job.data.host && (this.inFlight.get(job.data.host) ?? 0) >= this.config.perDestination) {
      await job.moveToDelayed(Date.now() + 100 + Math.floor(Math.random() * 200), token);
      throw new DelayedError();
    }
    const delivery = await this.deliveries.find(job.data.deliveryId);
    if (!delivery || delivery.status === 'succeeded') return;
    const host = new URL(delivery.url).host;
    const attempt = await this.deliveries.startAttempt(delivery.id);
    if (attempt === undefined) return; // settled meanwhile (or failed/blocked and not replayed)
    this.inFlight.set(host, (this.inFlight.get(host) ?? 0) + 1);
    const startedAt = new Date();
    let result;
    try {
      const secrets = await this.secretsOf(delivery.merchant_id);
      result = await this.sender.send(delivery.id, delivery.url, delivery.body, secrets);
    } finally {
      const n = (this.inFlight.get(host) ?? 1) - 1;
      if (n > 0) this.inFlight.set(host, n);
      else this.inFlight.delete(host);
    }
    attemptDuration.observe({ error_class: result.errorClass ?? 'none' }, result.durationMs / 1000);
    const record = { startedAt, ...result };
    const describe = result.httpStatus ? `HTTP ${result.httpStatus}` : `${result.errorClass}: ${result.responseBody ?? ''}`;

    if (!result.errorClass) {
      await this.deliveries.finishAttempt(delivery.id, attempt, record, { status: 'succeeded' });
      deliveryOutcomes.inc({ outcome: 'succeeded' });
      return;
    }
    if (result.errorClass === 'ssrf_blocked') {
      await this.deliveries.finishAttempt(delivery.id, attempt, record, { status: 'blocked', error: describe });
      deliveryOutcomes.inc({ outcome: 'blocked' });
      throw new UnrecoverableError(`delivery ${delivery.id} blocked: ${describe}`);
    }
    const lastRun = job.attemptsMade + 1 >= (job.opts.attempts ?? MAX_ATTEMPTS);
    if (result.httpStatus === 410 || lastRun) {
      await this.deliveries.finishAttempt(delivery.id, attempt, record, { status: 'failed', error: result.httpStatus === 410 ? 'HTTP 410 Gone: the listener asked us to stop' : describe });
      deliveryOutcomes.inc({ outcome: 'failed' });
      throw new UnrecoverableError(`delivery ${delivery.id} failed: ${describe}`);
    }
    const delayMs = retryDelayMs(job.attemptsMade + 1, this.config.scheduleScale, result.retryAfterMs);
    await this.deliveries.finishAttempt(delivery.id, attempt, record, { status: 'pending', nextAttemptAt: new Date(Date.now() + delayMs), error: describe });
    deliveryOutcomes.inc({ outcome: 'retried' });
    throw new RetryLater(`delivery ${delivery.id} attempt ${attempt}: ${describe}`, delayMs);
  }

  /** Cached for a few seconds: a rotated secret signs within that. */
  private async secretsOf(merchantId: string): Promise<WebhookSecrets> {
    const hit = this.secrets.get(merchantId);
    if (hit && hit.expiresAt > Date.now()) return hit.value;
    const value = await this.deliveries.secretsOf(merchantId);
    if (!value) throw new Error(`merchant ${merchantId} not found`);
    this.secrets.set(merchantId, { value, expiresAt: Date.now() + 5_000 });
    return value;
  }
}
