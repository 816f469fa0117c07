import { Counter, Gauge, Histogram } from 'prom-client';

export const deliveryOutcomes = new Counter({
  name: 'webhook_deliveries_total',
  help: 'Webhook delivery attempts by outcome: succeeded, retried, failed (gave up or 410), blocked (SSRF)',
  labelNames: ['outcome'],
});

export const deliveriesThrottled = new Counter({
  name: 'webhook_deliveries_throttled_total',
  help: "Deliveries put back by their listener's throttle (not attempted, no attempt spent; they come back when a token is due)",
});

export const deliveriesDeferred = new Counter({
  name: 'webhook_deliveries_deferred_total',
  help: "Attempts put back to the queue because their destination's (cap=destination) or their merchant's (cap=merchant) slots were all taken (no attempt spent)",
  labelNames: ['cap'],
});

export const eventsSwept = new Counter({
  name: 'webhook_events_swept_total',
  help: 'Status changes the event sweep delivered from the outbox because their event never made a delivery (outcome=delivered), or gave up on (outcome=given_up: a row that kept failing)',
  labelNames: ['outcome'],
});

export const attemptDuration = new Histogram({
  name: 'webhook_attempt_duration_seconds',
  help: 'Duration of one webhook attempt, by error class (none on a 2xx)',
  labelNames: ['error_class'],
  buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 15],
});

/** Where each gauge read from Postgres on a scrape gets its value (set once its repository exists). */
const sources = new Map<string, () => Promise<number>>();

/**
 * A gauge read on every scrape from Postgres (so every notifier process reports the same value);
 * with Postgres down it keeps its last value (/health says so).
 */
function scrapedGauge(name: string, help: string): Gauge {
  return new Gauge({
    name,
    help,
    async collect() {
      try {
        const source = sources.get(name);
        if (source) this.set(await source());
      } catch {
        // Postgres down: the gauge keeps its last value.
      }
    },
  });
}

const OLDEST_PENDING = 'webhook_oldest_pending_delivery_age_seconds';
const HELD = 'webhook_held_deliveries';
const OLDEST_HELD = 'webhook_oldest_held_delivery_age_seconds';

export const oldestPendingAge = scrapedGauge(
  OLDEST_PENDING,
  'Age of the oldest delivery that has not succeeded yet and is still being retried',
);
export const heldDeliveries = scrapedGauge(
  HELD,
  'Deliveries held, not attempted, because their listener is disabled (or left held by a race the sweeper releases)',
);
export const oldestHeldAge = scrapedGauge(OLDEST_HELD, 'Age of the oldest held delivery (0 with none)');

export function measureOldestPendingWith(source: () => Promise<number>): void {
  sources.set(OLDEST_PENDING, source);
}

/** Both held gauges from one summary (count, oldest age). */
export function measureHeldWith(summary: () => Promise<{ held: number; oldestAgeS: number }>): void {
  sources.set(HELD, async () => (await summary()).held);
  sources.set(OLDEST_HELD, async () => (await summary()).oldestAgeS);
}
