import { Inject, Injectable, Logger, OnApplicationBootstrap, OnApplicationShutdown } from '@nestjs/common';
import { DelayedError, Job, MinimalJob, Queue, UnrecoverableError, Worker } from 'bullmq';
import { DeliveriesRepository, DeliveryRow, MerchantsRepository, openWebhookSecrets, WebhookSecrets } from '@app/persistence';
import { SecretKeyMissingError, SecretOpenError } from '@app/vault/secrets';
import { MAX_ATTEMPTS, retryDelayMs } from '@app/webhooks';
import { DELIVERY_QUEUE, DeliveryJob, enqueueDelivery, WEBHOOK_BACKOFF } from '@app/webhooks/delivery';
import { NotifierConfig } from '../config/notifier.config';
import { SLOTS_REDIS } from '../redis.token';
import { AttemptSlots } from './attempt-slots';
import { Outcome, verdictOf } from './attempt-verdict';
import { attemptDuration, deliveriesThrottled, deliveryOutcomes, measureOldestPendingWith } from './delivery-metrics';
import { HostSlots, Release } from './host-slots';
import { MerchantSlots } from './merchant-slots';
import { ListenerHealthRecorder } from './listener-health.recorder';
import { ListenerBuckets, ThrottleSettings } from './webhook-throttle';
import { SendResult, WebhookSender } from './webhook-sender';
import { type RedisConnection, safeErrorText } from '@app/platform';
import { currentTraceId, inSpan, SpanKind, withTraceparent } from '@app/platform/tracing';

/** How long a delivery whose throttle could not be read waits before it tries again (no attempt spent). */
const THROTTLE_UNREADABLE_RETRY_MS = 5_000;

/** A merchant's slot outlives the longest attempt by this much before it runs out by itself (a replica died holding it). */
const MERCHANT_LEASE_SLACK_MS = 10_000;

/** A failed attempt that should be retried after `delayMs` (the schedule, or the listener's Retry-After). */
class RetryLater extends Error {
  constructor(
    message: string,
    readonly delayMs: number,
  ) {
    super(message);
  }
}

const SECRET_UNUSABLE = "the merchant's sealed webhook secret does not open (tampered or copied from another row): nothing was sent";

/**
 * Delivers webhooks. The first attempt runs at once, in the handler of the status change (no
 * second job on the happy path); a failed one, or one over the host's cap, becomes a job of the
 * delivery queue, which BullMQ re-runs on the DESIGN.md 4 schedule (a custom backoff strategy)
 * until an attempt succeeds, the listener answers 410, or the schedule is exhausted. Every
 * attempt is recorded in Postgres. At most `perDestination` attempts run against one destination
 * at a time (HostSlots, keyed by registrable domain or host, never the port: destinationKey): an
 * attempt over that cap waits a moment for a slot, and past that goes to the queue (a job steps
 * back without spending an attempt), so one slow listener never holds every slot. And at most
 * `perMerchant` attempts of one merchant run at a time over every replica (MerchantSlots, leases
 * in Redis): an attempt over it goes to the queue at once, the same way, so one merchant whose
 * listeners hang (on as many hosts as it likes) never holds back the other merchants' webhooks.
 *
 * A merchant's webhook throttle (deliveries per second to each listener) is checked once an
 * attempt is claimed, right before the request: a delivery over it is not attempted, its claim is
 * given back and it returns to the queue for when its listener's bucket (in Redis, shared by every
 * replica: ListenerBuckets) has a token for it. That spends no attempt and says nothing about the
 * listener's health. A merchant without a throttle costs no Redis call (ThrottleSettings caches it).
 */
@Injectable()
export class DeliveryWorker implements OnApplicationBootstrap, OnApplicationShutdown {
  private readonly logger = new Logger(DeliveryWorker.name);
  private worker?: Worker<DeliveryJob>;
  private readonly sender: WebhookSender;
  private readonly slots: AttemptSlots;
  private readonly secrets = new Map<string, { value: WebhookSecrets; expiresAt: number }>();
  private readonly throttles: ThrottleSettings;
  private readonly buckets: ListenerBuckets;

  constructor(
    private readonly deliveries: DeliveriesRepository,
    private readonly merchants: MerchantsRepository,
    private readonly config: NotifierConfig,
    readonly queue: Queue,
    private readonly health: ListenerHealthRecorder,
    // While Redis is down, a slot or throttle check waits for it, as the queue does.
    @Inject(SLOTS_REDIS) redis: RedisConnection,
  ) {
    this.sender = new WebhookSender(config.allowNetworks, config.timeoutMs, {
      connectMs: config.connectTimeoutMs,
      firstByteMs: config.firstByteTimeoutMs,
    });
    this.slots = new AttemptSlots(
      new HostSlots(config.perDestination, config.slotWaitMs),
      new MerchantSlots(redis, config.base.queuePrefix, config.perMerchant, config.timeoutMs + MERCHANT_LEASE_SLACK_MS),
      THROTTLE_UNREADABLE_RETRY_MS,
      this.logger,
    );
    this.throttles = new ThrottleSettings((id) => this.merchants.webhookThrottleOf(id));
    this.buckets = new ListenerBuckets(redis, config.base.queuePrefix);
    measureOldestPendingWith(() => this.deliveries.oldestOpenAgeSeconds());
  }

  onApplicationBootstrap(): void {
    this.worker = new Worker<DeliveryJob>(DELIVERY_QUEUE, (job, token) => this.tracedJob(job, token), {
      // The queue's own connection and prefix (with its hash tag on a cluster).
      connection: this.queue.opts.connection,
      prefix: this.queue.opts.prefix,
      concurrency: this.config.concurrency,
      // A killed notifier's attempts come back after at most ~10 s (the lock is renewed while alive).
      lockDuration: 10_000,
      stalledInterval: 10_000,
      maxStalledCount: 5,
      settings: {
        backoffStrategy: (attemptsMade: number, type?: string, err?: Error, job?: MinimalJob<DeliveryJob>) =>
          type === WEBHOOK_BACKOFF && err instanceof RetryLater
            ? err.delayMs
            : retryDelayMs(attemptsMade + (job?.data.offset ?? 0), this.config.scheduleScale),
      },
    });
    this.worker.on('error', (e) => this.logger.warn(`delivery worker: ${safeErrorText(e)}`));
    // A last run that failed for another reason than the listener (Postgres down, no merchant):
    // the delivery must not stay pending/sending forever; failed, it is visible and replayable.
    this.worker.on('failed', (job, err) => {
      if (!job || err instanceof UnrecoverableError || job.attemptsMade < (job.opts.attempts ?? MAX_ATTEMPTS)) return;
      this.deliveries
        .markFailedIfOpen(job.data.deliveryId, err.message)
        .catch((e) => this.logger.warn(`delivery ${job.data.deliveryId}: ${safeErrorText(e)}`));
    });
  }

  async onApplicationShutdown(): Promise<void> {
    // Waits for attempts in flight, so a deploy never cuts one in half, then for the listener
    // verdicts they noted (the event handlers' attempts are done: the transport closed first).
    await this.worker?.close();
    await this.health.flush();
    this.sender.close();
  }

  /**
   * The first attempt of a delivery, made by the status change's handler. `claimed`: the
   * delivery was created already claimed for it (saves a round trip). When its destination stays
   * busy or its merchant has all its slots, the claim is given back and the queue takes the
   * delivery. A crash during it re-runs that handler (the event job comes back), which finds the
   * delivery and tries again with the same webhook-id.
   */
  async deliverNow(delivery: DeliveryRow, claimed = false): Promise<void> {
    const slot = await this.slots.acquire(delivery.url, delivery.merchant_id);
    if (typeof slot === 'number') {
      if (claimed) await this.deliveries.unclaim(delivery.id, delivery.attempts);
      await enqueueDelivery(this.queue, delivery, { delayMs: slot });
      return;
    }
    const outcome = await this.attempt(claimed ? delivery : delivery.id, 1, slot, false);
    if (outcome.next === 'retry') await enqueueDelivery(this.queue, delivery, { offset: 1, delayMs: outcome.delayMs });
    if (outcome.next === 'later') await enqueueDelivery(this.queue, delivery, { delayMs: outcome.delayMs, throttled: true });
  }

  /** Each run of a delivery job is a span of the trace that queued it (the status change's, or a replay's). */
  private tracedJob(job: Job<DeliveryJob>, token?: string): Promise<void> {
    const attributes = { 'gateway.delivery_id': job.data.deliveryId, 'gateway.attempt': (job.data.offset ?? 0) + job.attemptsMade + 1 };
    // Put back for its destination's or merchant's cap (DelayedError): waiting its turn, not failing.
    const notFailure = (e: unknown) => e instanceof DelayedError;
    return withTraceparent(job.data.traceparent, () =>
      inSpan('deliver webhook', { kind: SpanKind.CONSUMER, attributes, notFailure }, () => this.runJob(job, token)),
    );
  }

  private async runJob(job: Job<DeliveryJob>, token?: string): Promise<void> {
    const offset = job.data.offset ?? 0;
    let merchantId = job.data.merchantId;
    if (!merchantId) {
      // A job queued without its merchant (before the per-merchant cap, or by a path that does not
      // know it): read once, then kept in the job for its later runs.
      merchantId = (await this.deliveries.find(job.data.deliveryId))?.merchant_id;
      if (!merchantId) return; // the delivery is gone
      await job.updateData({ ...job.data, merchantId });
    }
    const slot = await this.slots.acquire(job.data.host ?? '', merchantId);
    if (typeof slot === 'number') {
      // Over its destination's or its merchant's cap: back to the queue without spending an
      // attempt, due when there should be room (deferMs), not in a tight loop through Redis.
      await job.moveToDelayed(Date.now() + slot, token);
      throw new DelayedError();
    }
    const outcome = await this.attempt(job.data.deliveryId, offset + job.attemptsMade + 1, slot, job.data.throttled === true);
    if (outcome.next === 'later') {
      // Over the listener's throttle: back to the queue for its turn, without spending an attempt;
      // marked, so that when it runs again it takes the token kept for it.
      if (!job.data.throttled) await job.updateData({ ...job.data, throttled: true });
      await job.moveToDelayed(Date.now() + outcome.delayMs, token);
      throw new DelayedError();
    }
    if (outcome.next === 'retry') throw new RetryLater(outcome.reason, outcome.delayMs);
    if (outcome.next === 'stop') throw new UnrecoverableError(outcome.reason);
  }

  /**
   * One attempt; `position` is its place in the schedule (1 = the first). `delivery` is its id
   * (the attempt is claimed here) or the row already claimed for it. The host's slot is held
   * until the listener has answered, not while the attempt is recorded. `returning`: the delivery
   * was put back by its listener's throttle before.
   */
  private async attempt(delivery: string | DeliveryRow, position: number, slot: Release, returning: boolean): Promise<Outcome> {
    let claimed: DeliveryRow | undefined;
    let result: SendResult;
    let startedAt: Date;
    try {
      claimed = typeof delivery === 'string' ? await this.deliveries.startAttempt(delivery) : delivery;
      if (!claimed) return { next: 'done' }; // settled meanwhile (or failed/blocked and not replayed)
      if (claimed.status === 'held') return { next: 'done' }; // its listener is disabled: enabling it releases the delivery
      let laterMs: number;
      try {
        laterMs = await this.throttleWaitMs(claimed, returning);
      } catch {
        // The throttle setting or its bucket could not be read (Postgres or Redis down): nothing was
        // sent, so the claim is given back (no attempt spent) and the delivery tries again shortly.
        laterMs = THROTTLE_UNREADABLE_RETRY_MS;
      }
      if (laterMs > 0) {
        await this.deliveries.unclaim(claimed.id, claimed.attempts, new Date(Date.now() + laterMs));
        return { next: 'later', delayMs: laterMs };
      }
      let secrets: WebhookSecrets;
      try {
        secrets = await this.secretsOf(claimed.merchant_id);
      } catch (e) {
        // A sealed secret that does not open for its row was tampered with or copied from
        // another merchant: nothing is sent (no unsigned or wrongly signed callback), the
        // delivery fails at once and stays replayable. A key this notifier lacks is a
        // deployment still catching up: the attempt is retried as any other error.
        if (!(e instanceof SecretOpenError) || e instanceof SecretKeyMissingError) throw e;
        this.logger.error(`delivery ${claimed.id}: the webhook secret of merchant ${claimed.merchant_id} does not open; not sent`);
        await this.deliveries.markFailedIfOpen(claimed.id, SECRET_UNUSABLE);
        deliveryOutcomes.inc({ outcome: 'failed' });
        return { next: 'stop', reason: `delivery ${claimed.id} failed: ${SECRET_UNUSABLE}` };
      }
      startedAt = new Date();
      result = await this.sender.send(claimed.id, claimed.url, claimed.body, secrets);
    } finally {
      slot();
    }
    return this.record(claimed, position, startedAt, result);
  }

  /**
   * Records the attempt and its listener's verdict (side by side), and decides what comes next.
   * A failure's verdict is waited for (a disable it makes due comes before the retry is
   * scheduled); a success's is not (ListenerHealthRecorder.note).
   */
  private async record(delivery: DeliveryRow, position: number, startedAt: Date, result: SendResult): Promise<Outcome> {
    attemptDuration.observe({ error_class: result.errorClass ?? 'none' }, result.durationMs / 1000);
    const record = { startedAt, ...result, traceId: currentTraceId() };
    // The listener's health counts its answers; a refused address is ours, not the listener's.
    const noted =
      result.errorClass === 'ssrf_blocked'
        ? Promise.resolve()
        : this.health.note(delivery, !result.errorClass, new Date(startedAt.getTime() + result.durationMs));
    try {
      const verdict = verdictOf(delivery.id, delivery.attempts, position, result, this.config.scheduleScale);
      await this.deliveries.finishAttempt(delivery.id, delivery.attempts, record, verdict.next);
      deliveryOutcomes.inc({ outcome: verdict.counted });
      return verdict.outcome;
    } finally {
      await noted;
    }
  }

  /**
   * 0 when the delivery may be attempted now; otherwise the milliseconds until its listener's
   * throttle has a token for it. No throttle set: no Redis call.
   */
  private async throttleWaitMs(d: DeliveryRow, returning: boolean): Promise<number> {
    if (!d.origin) return 0; // created before listeners were tracked
    const perS = await this.throttles.perSOf(d.merchant_id);
    if (perS === null) return 0;
    const waitMs = await this.buckets.take(d.merchant_id, d.origin, perS, returning);
    if (waitMs > 0) deliveriesThrottled.inc();
    return waitMs;
  }

  /** Cached for a few seconds: a rotated secret signs within that. */
  private async secretsOf(merchantId: string): Promise<WebhookSecrets> {
    const hit = this.secrets.get(merchantId);
    if (hit && hit.expiresAt > Date.now()) return hit.value;
    const sealed = await this.merchants.webhookSecretsOf(merchantId);
    if (!sealed) throw new Error(`merchant ${merchantId} not found`);
    const value = openWebhookSecrets(this.config.secrets, merchantId, sealed);
    this.secrets.set(merchantId, { value, expiresAt: Date.now() + 5_000 });
    return value;
  }
}
