import { Queue } from 'bullmq';
import { currentTraceparent } from '@app/platform/tracing';
import { MAX_ATTEMPTS } from '../schedule';

/** The notifier's own queue of delivery attempts (one job per delivery, or per replay of it). */
export const DELIVERY_QUEUE = 'webhook.deliver';
/** The name of the backoff strategy the delivery worker registers (the DESIGN.md 4 schedule). */
export const WEBHOOK_BACKOFF = 'webhook';

export interface DeliveryJob {
  deliveryId: string;
  /** The listener's host, so the per-destination cap is checked before any database read. */
  host?: string;
  /** The delivery's merchant, so the per-merchant cap is too (absent on jobs queued before it was added). */
  merchantId?: string;
  /** Attempts made before this job (the first one runs inline): its runs continue the schedule. */
  offset?: number;
  /** Put back by the listener's throttle: its turn has come when it runs (see the notifier's ListenerBuckets). */
  throttled?: boolean;
  /** The W3C traceparent of the status change (or replay) that queued it: every attempt is a span of that trace. */
  traceparent?: string;
}

/**
 * Queues a delivery. The job id is the delivery id (a replay adds its number), so re-delivered
 * events never queue a delivery twice while its job is known to Redis; past that, the delivery's
 * status in Postgres makes a stray job a no-op.
 */
export function enqueueDelivery(
  queue: Queue,
  delivery: { id: string; url: string; merchant_id?: string },
  opts: { replay?: number; offset?: number; delayMs?: number; throttled?: boolean } = {},
): Promise<unknown> {
  const offset = opts.offset ?? 0;
  const job: DeliveryJob = { deliveryId: delivery.id, host: new URL(delivery.url).host, offset };
  if (delivery.merchant_id) job.merchantId = delivery.merchant_id;
  if (opts.throttled) job.throttled = true;
  const traceparent = currentTraceparent();
  if (traceparent) job.traceparent = traceparent;
  return queue.add(DELIVERY_QUEUE, job, {
    jobId: opts.replay ? `${delivery.id}-r${opts.replay}` : delivery.id,
    delay: opts.delayMs,
    attempts: MAX_ATTEMPTS - offset,
    backoff: { type: WEBHOOK_BACKOFF },
    removeOnComplete: { age: 3600, count: 10_000 },
    removeOnFail: { age: 7 * 86_400 },
  });
}
