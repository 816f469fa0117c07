import { Gauge } from 'prom-client';

/** How the lag is read (set by the relay once its repository exists); none in a process without a relay. */
let source: (() => Promise<number>) | undefined;

/** The longest a scrape waits for Postgres: a slow or absent database never stalls /metrics. */
const SCRAPE_TIMEOUT_MS = 1_000;

/**
 * outbox_oldest_unpublished_age_seconds, read from Postgres on each scrape (so every replica running
 * the relay reports the same value: aggregate with max). Postgres down or slow: it keeps its last
 * value, and dependency_up{dependency="postgres"} says why.
 */
export const outboxLag = new Gauge({
  name: 'outbox_oldest_unpublished_age_seconds',
  help: 'Age of the oldest outbox event not yet published to its stream (0 when none waits): how far the relay is behind',
  async collect() {
    if (!source) return;
    let timer: NodeJS.Timeout | undefined;
    try {
      const late = new Promise<never>((_, reject) => (timer = setTimeout(() => reject(new Error('timeout')), SCRAPE_TIMEOUT_MS)));
      this.set(await Promise.race([source(), late]));
    } catch {
      // Postgres down or slow: the gauge keeps its last value.
    } finally {
      clearTimeout(timer);
    }
  },
});

/** Called by the relay: from then on each scrape reads the lag with `read`. */
export function measureOutboxLagWith(read: () => Promise<number>): void {
  source = read;
}
