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

export const attemptDuration = new Histogram({
  name: 'webhook_attempt_duration_seconds',
  help: 'Duration of one webhook attempt, by error class (none on a 2xx)',
  labelNames: ['error_class'],
  buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 15],
});

let oldestSource: (() => Promise<number>) | undefined;

/** Read on every scrape (from Postgres, so every notifier process reports the same age). */
export function measureOldestPendingWith(source: () => Promise<number>): void {
  oldestSource = source;
}

export const oldestPendingAge = new Gauge({
  name: 'webhook_oldest_pending_delivery_age_seconds',
  help: 'Age of the oldest delivery that has not succeeded yet and is still being retried',
  async collect() {
    try {
      if (oldestSource) this.set(await oldestSource());
    } catch {
      // Postgres down: /health says so; the gauge keeps its last value.
    }
  },
});
