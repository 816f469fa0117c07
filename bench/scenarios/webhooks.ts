import { randomUUID } from 'node:crypto';
import { lastValueFrom } from 'rxjs';
import { Events, toTransactionResponse, TransactionEvent, TransactionView } from '@app/contracts';
import { BullMqClient, withJobId } from '@app/messaging';
import { EnvReader, readRedisTarget } from '@app/platform';
import { sleep, within } from '../../scripts/lib/processes';
import { Arrivals, bareDeliveries, WebhookListener } from '../lib/listener';
import { Figure } from '../lib/scenario';
import { BenchStack } from '../lib/stack';

/**
 * The notifier end to end: transaction.status_changed events put straight on its stream (as the
 * API's outbox relay would), through the delivery row in Postgres and the delivery queue, to a
 * listener in this process. Two listeners: one answering at once, one after 100 ms.
 */
const CHUNK = 500;
const TIMEOUT_MS = 120_000;
// The notifier's per-destination cap (WEBHOOK_PER_DESTINATION, default 16): it, not
// WEBHOOK_CONCURRENCY (64), bounds what one listener sees, so the baseline client uses it too.
const PER_DESTINATION = 16;

function view(id: string, n: number): TransactionView {
  return {
    id,
    operation: 'sale',
    status: 8,
    statusVersion: 2,
    errorCode: '',
    reference: `WH-${n}`,
    currency: '986',
    amount: 150000,
    capturedAmount: 150000,
    cancelledAmount: 0,
    acquirer: 26,
    instalments: 1,
    createdAt: new Date().toISOString(),
    processor: { tid: 'a'.repeat(20), nsu: '123456789', authorizationCode: '123456', returnCode: '00', returnMessage: 'Approved' },
  };
}

/** A synthetic but valid approved-sale event; the merchant must be real (deliveries reference it). */
function event(merchantId: string, urlReturn: string, n: number): TransactionEvent {
  const transactionId = randomUUID().toUpperCase();
  return {
    transactionId,
    merchantId,
    statusVersion: 2,
    status: 8,
    capturedAmount: 150000,
    cancelledAmount: 0,
    urlReturn,
    view: view(transactionId, n),
  };
}

/** Publishes `total` events to `listener` a chunk at a time, each stamped with its publish time; resolves when all arrived or timed out. */
async function deliver(
  events: BullMqClient,
  stack: BenchStack,
  listener: WebhookListener,
  run: string,
  total: number,
): Promise<{ arrivals: Arrivals; startedAt: number; timedOut: boolean }> {
  const arrivals = listener.track(run, total);
  const startedAt = Date.now();
  for (let i = 0; i < total; i += CHUNK) {
    const url = `${listener.url}?run=${run}&sent=${Date.now()}`;
    // Through the transport's own publisher, as the outbox relay does, with an id of our own per event.
    await Promise.all(
      Array.from({ length: Math.min(CHUNK, total - i) }, (_, k) =>
        lastValueFrom(
          events.emit(Events.TransactionStatusChanged, withJobId(event(stack.merchantInternalId, url, i + k), `${run}-${i + k}`)),
        ),
      ),
    );
  }
  const timedOut =
    (await within(
      arrivals.complete.then(() => true),
      TIMEOUT_MS,
    )) === undefined;
  return { arrivals, startedAt, timedOut };
}

/**
 * The slow listener has no target: at most 16 attempts at a time per destination (the notifier's
 * WEBHOOK_PER_DESTINATION) × 100 ms each bounds it at ~160/s by design. Also says whether it held.
 */
function bound(delayMs: number, maxOpen: number): string {
  const text = `bounded at ~${(PER_DESTINATION * 1000) / delayMs}/s by design (${PER_DESTINATION} per destination × ${delayMs} ms)`;
  return maxOpen > PER_DESTINATION ? `${text}, **but ${maxOpen} attempts were open at once: the cap did not hold**` : text;
}

const quantile = (sorted: number[], p: number) => sorted[Math.min(sorted.length - 1, Math.floor(p * sorted.length))] ?? NaN;

export async function benchWebhooks(stack: BenchStack, fastEvents: number, slowEvents: number, warmupEvents: number): Promise<Figure[]> {
  const r = new EnvReader(stack.env);
  const queue = new BullMqClient({
    connection: readRedisTarget(r),
    prefix: stack.env.QUEUE_PREFIX!,
    partitions: r.int('QUEUE_PARTITIONS', 1, 1, 64),
  });
  r.done('bench');
  // The body the notifier sends for such an event, so the bare client posts the same size.
  const sample = event(stack.merchantInternalId, 'http://127.0.0.1/', 0).view!;
  const body = JSON.stringify({
    type: Events.TransactionStatusChanged,
    timestamp: new Date().toISOString(),
    data: toTransactionResponse(sample),
  });
  const runTag = Date.now().toString(36);
  const figures: Figure[] = [];
  try {
    for (const l of [
      { name: 'webhooks → listener answering at once', delayMs: 0, events: fastEvents, target: 1000 },
      { name: 'webhooks → listener answering in 100 ms', delayMs: 100, events: slowEvents },
    ]) {
      const listener = await WebhookListener.start(l.delayMs);
      try {
        // Warm-up (not counted, first listener only): JIT and the notifier's pools, so the figures are steady state.
        if (warmupEvents > 0 && l.delayMs === 0) await deliver(queue, stack, listener, `${runTag}w${l.delayMs}`, warmupEvents);
        const { arrivals, startedAt, timedOut } = await deliver(queue, stack, listener, `${runTag}m${l.delayMs}`, l.events);
        const delivered = arrivals.latencies.size;
        const value = delivered / ((arrivals.lastArrivalAt - startedAt) / 1000 || Infinity);
        await sleep(500); // lets the last attempts finish before the baseline shares the listener
        const baseline = await bareDeliveries(listener.url + '?run=baseline', body, l.events, PER_DESTINATION);
        const lat = [...arrivals.latencies.values()].sort((a, b) => a - b);
        figures.push({
          name: l.name,
          unit: 'deliveries/s',
          value,
          baseline,
          target: l.target,
          failures: l.events - delivered,
          note: l.delayMs ? bound(l.delayMs, arrivals.maxOpen) : undefined,
          detail: `${delivered}/${l.events} delivered${timedOut ? ` (**${l.events - delivered} not within ${TIMEOUT_MS / 1000} s**)` : ''}, enqueue → arrival p50 ${quantile(lat, 0.5)} ms, p99 ${quantile(lat, 0.99)} ms, ${arrivals.duplicates} duplicates, at most ${arrivals.maxOpen} requests open at the listener at once`,
        });
      } finally {
        await listener.close();
      }
    }
  } finally {
    await queue.close();
  }
  return figures;
}
