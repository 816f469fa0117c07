import { Injectable, Logger, OnApplicationBootstrap, OnApplicationShutdown } from '@nestjs/common';
import { DelayedError, Job, MinimalJob, Queue, UnrecoverableError, Worker } from 'bullmq';
import { DeliveriesRepository, DeliveryRow, WebhookSecrets } from '@app/persistence';
import { DELIVERY_QUEUE, DeliveryJob, enqueueDelivery, MAX_ATTEMPTS, retryDelayMs, WEBHOOK_BACKOFF } from '@app/webhooks';
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

type Outcome = { next: 'done' } | { next: 'retry'; delayMs: number; reason: string } | { next: 'stop'; reason: string };

/**
 * Delivers webhooks. The first attempt runs at once, in the handler of the status change (no
 * second job on the happy path); a failed one, or one over the host's cap, becomes a job of the
 * delivery queue, which BullMQ re-runs on the DESIGN.md 4 schedule (a custom backoff strategy)
 * until an attempt succeeds, the listener answers 410, or the schedule is exhausted. Every
 * attempt is recorded in Postgres. At most `perDestination` attempts run against one host at a
 * time; a job over that cap goes back to the queue for a moment without spending an attempt, so
 * one slow listener never holds every slot.
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
    this.worker = new Worker<DeliveryJob>(DELIVERY_QUEUE, (job, token) => this.runJob(job, token), {
      connection: this.queue.opts.connection,
      prefix: this.queue.opts.prefix,
      concurrency: this.config.concurrency,
      // A killed notifier's attempts come back after at most ~10 s (the lock is renewed while alive).
      lockDuration: 10_000,
      stalledInterval: 10_000,
      maxStalledCount: 5,
      settings: {
        backoffStrategy: (attemptsMade: number, type?: string, err?: Error, job?: MinimalJob<DeliveryJob>) =>
          type === WEBHOOK_BACKOFF && err instanceof RetryLater ? err.delayMs : retryDelayMs(attemptsMade + (job?.data.offset ?? 0), this.config.scheduleScale),
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

  /**
   * The first attempt of a new delivery, made by the status change's handler. A crash during it
   * re-runs that handler (the event job comes back), which finds the delivery and tries again
   * with the same webhook-id.
   */
  async deliverNow(delivery: DeliveryRow, claimed = false): Promise<void> {
    const host = new URL(delivery.url).host;
    const outcome = await this.withSlot(host, () => this.attempt(delivery.id, 1, claimed ? delivery : undefined));
    if (outcome === undefined) await enqueueDelivery(this.queue, delivery); // over the cap: the queue takes it
    else if (outcome.next === 'retry') await enqueueDelivery(this.queue, delivery, { offset: 1, delayMs: outcome.delayMs });
  }

  private async runJob(job: Job<DeliveryJob>, token?: string): Promise<void> {
    const offset = job.data.offset ?? 0;
    const outcome = await this.withSlot(job.data.host ?? '', () => this.attempt(job.data.deliveryId, offset + job.attemptsMade + 1));
    if (outcome === undefined) {
      // Over the host's cap: step back for a moment without spending an attempt.
      await job.moveToDelayed(Date.now() + 100 + Math.floor(Math.random() * 200), token);
      throw new DelayedError();
    }
    if (outcome.next === 'retry') throw new RetryLater(outcome.reason, outcome.delayMs);
    if (outcome.next === 'stop') throw new UnrecoverableError(outcome.reason);
  }

  /**
   * Runs `work` holding one of the host's slots, or returns undefined when the host is at its cap.
   * The slot is taken in the same synchronous step as the check, so concurrent callers cannot all
   * pass it; and it is checked before any read, so a backlog for one slow host costs nothing.
   */
  private async withSlot(host: string, work: () => Promise<Outcome>): Promise<Outcome | undefined> {
    if ((this.inFlight.get(host) ?? 0) >= this.config.perDestination) return undefined;
    this.inFlight.set(host, (this.inFlight.get(host) ?? 0) + 1);
    try {
      return await work();
    } finally {
      const n = (this.inFlight.get(host) ?? 1) - 1;
      if (n > 0) this.inFlight.set(host, n);
      else this.inFlight.delete(host);
    }
  }

  /** Whether an attempt to `host` could start now (a hint: the slot is only taken by withSlot). */
  hasRoomFor(host: string): boolean {
    return (this.inFlight.get(host) ?? 0) < this.config.perDestination;
  }

  /**
   * One attempt; `position` is its place in the schedule (1 = the first). `claimed`: the delivery
   * was created already claimed for its first attempt (saves a round trip).
   */
  private async attempt(deliveryId: string, position: number, claimed?: DeliveryRow): Promise<Outcome> {
    const delivery = claimed ?? (await this.deliveries.startAttempt(deliveryId));
    if (!delivery) return { next: 'done' }; // settled meanwhile (or failed/blocked and not replayed)
    const attempt = delivery.attempts;
    const startedAt = new Date();
    const secrets = await this.secretsOf(delivery.merchant_id);
    const result = await this.sender.send(delivery.id, delivery.url, delivery.body, secrets);
    attemptDuration.observe({ error_class: result.errorClass ?? 'none' }, result.durationMs / 1000);
    const record = { startedAt, ...result };
    const describe = result.httpStatus ? `HTTP ${result.httpStatus}` : `${result.errorClass}: ${result.responseBody ?? ''}`;

    if (!result.errorClass) {
      await this.deliveries.finishAttempt(delivery.id, attempt, record, { status: 'succeeded' });
      deliveryOutcomes.inc({ outcome: 'succeeded' });
      return { next: 'done' };
    }
    if (result.errorClass === 'ssrf_blocked') {
      await this.deliveries.finishAttempt(delivery.id, attempt, record, { status: 'blocked', error: describe });
      deliveryOutcomes.inc({ outcome: 'blocked' });
      return { next: 'stop', reason: `delivery ${delivery.id} blocked: ${describe}` };
    }
    if (result.httpStatus === 410 || position >= MAX_ATTEMPTS) {
      await this.deliveries.finishAttempt(delivery.id, attempt, record, { status: 'failed', error: result.httpStatus === 410 ? 'HTTP 410 Gone: the listener asked us to stop' : describe });
      deliveryOutcomes.inc({ outcome: 'failed' });
      return { next: 'stop', reason: `delivery ${delivery.id} failed: ${describe}` };
    }
    const delayMs = retryDelayMs(position, this.config.scheduleScale, result.retryAfterMs);
    await this.deliveries.finishAttempt(delivery.id, attempt, record, { status: 'pending', nextAttemptAt: new Date(Date.now() + delayMs), error: describe });
    deliveryOutcomes.inc({ outcome: 'retried' });
    return { next: 'retry', delayMs, reason: `delivery ${delivery.id} attempt ${attempt}: ${describe}` };
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
