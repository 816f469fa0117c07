import { Client } from 'pg';
import { Browser, BrowserContext } from 'playwright-core';
import { launchChromium, SHOTS } from './console-browser';
import { LOCAL_LISTENER_ENV } from './deliveries';
import { Listener } from './listener';
import { OtlpReceiver } from './otlp';
import { receiverOf, saleBody } from './money';
import { eventually, MerchantCredentials, Stack, startStack } from './stack';

export { SHOTS };

/** The notifier's settings for the console and portal suites: a delivery to a failing listener fails all 10 attempts in seconds. */
const FAST_FAILING_NOTIFIER: Record<string, string> = {
  ...LOCAL_LISTENER_ENV,
  WEBHOOK_SWEEP_INTERVAL_MS: '500',
  WEBHOOK_SWEEP_GRACE_S: '1',
};

export interface FailedDelivery {
  id: string;
  status: string;
  attempts: number;
}

/** A sale of `shop` whose deliveries go to `path` on the listener: its first delivery, once all of them have failed. */
export async function failedDelivery(
  on: { stack: Stack; db: Client; listener: Listener },
  shop: MerchantCredentials,
  path: string,
): Promise<FailedDelivery> {
  const res = await receiverOf(on.stack.baseUrl, shop)('sale', saleBody(5_000, on.listener.url(path)));
  expect(res.status).toBe(200);
  return eventually(
    async () => {
      const rows: FailedDelivery[] = (
        await on.db.query('SELECT id, status, attempts FROM deliveries WHERE transaction_id = $1 ORDER BY created_at, id', [
          String(res.json.transactionId).toLowerCase(),
        ])
      ).rows;
      expect(rows.length).toBeGreaterThan(0);
      expect(rows.map((r) => r.status)).toEqual(rows.map(() => 'failed'));
      return rows[0];
    },
    { timeoutMs: 120_000, intervalMs: 500 },
  );
}

/** What a page suite (console, portal) runs against; filled in by its beforeAll. */
export interface PageSuite {
  stack: Stack;
  db: Client;
  listener: Listener;
  browser: Browser;
  /** Closed after the suite. */
  contexts: BrowserContext[];
  otlp: OtlpReceiver;
}

/** The console's TRACE_URL_TEMPLATE in the page suites. */
export const TRACE_URL = 'https://traces.example/trace/{traceId}';

/**
 * Registers the beforeAll and afterAll of a page suite: a database client, a listener, the whole
 * stack (its notifier failing deliveries fast) and Chromium. Call it at the top of the describe,
 * before the suite's own beforeAll, which then finds the fields set.
 */
export function pageSuite(): PageSuite {
  const suite = { contexts: [] as BrowserContext[] } as PageSuite;
  beforeAll(async () => {
    suite.db = new Client({ connectionString: process.env.DATABASE_URL });
    await suite.db.connect();
    suite.listener = await new Listener().start();
    // Traced, so each attempt has a trace the console links to (the spans go to a receiver here).
    suite.otlp = await new OtlpReceiver().start();
    suite.stack = await startStack(
      { OTEL_EXPORTER_OTLP_ENDPOINT: suite.otlp.url, OTEL_TRACES_SAMPLER_ARG: '1' },
      { withConsole: true, envFor: { notifier: FAST_FAILING_NOTIFIER, console: { TRACE_URL_TEMPLATE: TRACE_URL } } },
    );
    suite.browser = await launchChromium();
  });
  afterAll(async () => {
    for (const c of suite.contexts) await c.close().catch(() => undefined);
    await suite.browser?.close();
    await suite.stack?.stop();
    await suite.listener?.stop();
    await suite.otlp?.stop();
    await suite.db?.end();
  });
  return suite;
}
