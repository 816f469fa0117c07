import { OnApplicationShutdown } from '@nestjs/common';
import { Queue } from 'bullmq';
import { Events, Patterns } from '@app/contracts';
import { eventStreamKeys, type EventStreamKeys, queueOn } from '@app/messaging';
import { connectRedis, type RedisConnection, type RedisTarget } from '@app/platform';
import { DELIVERY_QUEUE, RECOVERY_QUEUE } from '@app/webhooks/delivery';

/** Queues whose job data the dashboard never shows: the request/reply ones carry sealed card data. */
export const CARD_BEARING_QUEUES: readonly string[] = Object.values(Patterns);
/** Queues whose failed jobs an operator may retry from the dashboard. */
export const RETRYABLE_QUEUES: readonly string[] = [DELIVERY_QUEUE];

/**
 * Every BullMQ queue of the system, for the operator dashboard and the replay endpoint. Events
 * (status changes, captures, cancellations) travel on streams, not queues: /metrics reports them
 * (`queue_*{queue="transaction.captured"}`), and /admin/events/dead lists and replays the ones
 * given up on (`events` here).
 */
export class AdminQueues implements OnApplicationShutdown {
  readonly redis: RedisConnection;
  readonly all: Queue[];
  /** Each event pattern's stream partitions. */
  readonly events: ReadonlyMap<string, EventStreamKeys[]>;
  readonly delivery: Queue;
  /** Recoveries started from the console (the notifier runs them). */
  readonly recovery: Queue;

  constructor(redis: RedisTarget, prefix: string, partitions = 1) {
    this.redis = connectRedis(redis, { maxRetriesPerRequest: null, lazyConnect: true });
    // Redis down is /health's to report (and a 503 per request): an unhandled 'error' would crash.
    this.redis.on('error', () => undefined);
    const names = [...Object.values(Patterns), DELIVERY_QUEUE, RECOVERY_QUEUE];
    this.all = names.map((name) => new Queue(name, queueOn(this.redis, prefix, name)).on('error', () => undefined));
    this.delivery = this.all.find((q) => q.name === DELIVERY_QUEUE)!;
    this.recovery = this.all.find((q) => q.name === RECOVERY_QUEUE)!;
    this.events = new Map(
      Object.values(Events).map((e) => [
        e,
        Array.from({ length: partitions }, (_, i) => eventStreamKeys(this.redis, prefix, e, i, partitions)),
      ]),
    );
  }

  async onApplicationShutdown(): Promise<void> {
    await Promise.all(this.all.map((q) => q.close()));
    this.redis.disconnect();
  }
}
