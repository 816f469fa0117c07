import { Queue } from 'bullmq';
import { MAX_ATTEMPTS } from './schedule';

/** The notifier's own queue of delivery attempts (one job per delivery, or per replay of it). */
export const DELIVERY_QUEUE = 'webhook.deliver';
/** The name of the backoff strategy the delivery worker registers (the DESIGN.md 4 schedule). */
export const WEBHOOK_BACKOFF = 'webhook';

export interface DeliveryJob {
  deliveryId: string;
  /** The listener's host, so the per-destination cap is checked before any database read. */
  host?: string;
}

/**
 * Queues a delivery. The job id is the delivery id (a replay adds its number), so re-delivered
 * events never queue a delivery twice while its job is known to Redis; past that, the delivery's
 * status in Postgres makes a stray job a no-op.
 */
export function enqueueDelivery(queue: Queue, delivery: { id: string; url: string }, replay = 0): Promise<unknown> {
  const deliveryId = delivery.id;
  return queue.add(DELIVERY_QUEUE, { deliveryId, host: new URL(delivery.url).host } satisfies DeliveryJob, {
    jobId: replay ? `${deliveryId}-r${replay}` : deliveryId,
    attempts: MAX_ATTEMPTS,
    backoff: { type: WEBHOOK_BACKOFF },
    removeOnComplete: { age: 3600, count: 10_000 },
    removeOnFail: { age: 7 * 86_400 },
  });
}
