import { randomBytes } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import { deleteKeys, type RedisConnection } from '@app/platform';
import { testRedis } from '../support/redis';
import { Client } from 'pg';
import { ListenerBuckets } from '../../apps/notifier/src/deliveries/webhook-throttle';
import {
  AppHandle,
  createMerchant,
  eventually,
  MerchantCredentials,
  runCli,
  runCliRaw,
  Stack,
  startApp,
  startStack,
} from '../support/stack';
import { receiverOf, saleBody } from '../support/money';
import { Listener } from '../support/listener';

jest.setTimeout(300_000);

const NOTIFIER_ENV = {
  WEBHOOK_SCHEDULE_SCALE: '0.0001',
  WEBHOOK_ALLOW_NETWORKS: '127.0.0.1/32',
  WEBHOOK_TIMEOUT_MS: '3000',
};
const PER_S = 5;
const THROTTLED_SALES = 40;

/** The most arrivals in any half-open window [t, t + 1 s) that starts at an arrival (the busiest windows start at one). */
function busiestSecond(times: readonly number[]): number {
  const sorted = [...times].sort((a, b) => a - b);
  let most = 0;
  for (let i = 0, j = 0; i < sorted.length; i++) {
    while (j < sorted.length && sorted[j] < sorted[i] + 1_000) j++;
    most = Math.max(most, j - i);
  }
  return most;
}

/** A counter's value in a Prometheus text answer: the sum of its lines that carry `label` (every line without one). */
function metric(text: string, name: string, label = ''): number {
  let sum = 0;
  for (const m of text.matchAll(new RegExp(`^${name}(?:\\{([^}]*)\\})? (\\S+)$`, 'gm')))
    if ((m[1] ?? '').includes(label)) sum += Number(m[2]);
  return sum;
}

/**
 * The bucket alone, on the real Redis (its own key prefix), two clients standing for two replicas:
 * at 5/s a token every 200 ms, one held at once. Times are Redis's, so the answers are checked
 * against the 200 ms steps with the time the calls themselves took as the only slack.
 */
describe('listener bucket (Redis script)', () => {
  const clients: RedisConnection[] = [];
  let a: ListenerBuckets;
  let b: ListenerBuckets;
  const prefix = `wt-${randomBytes(4).toString('hex')}`;
  const merchant = '6f1c2d3e-0000-4000-8000-000000000001';

  beforeAll(() => {
    for (let i = 0; i < 2; i++) clients.push(testRedis({ maxRetriesPerRequest: 1 }));
    [a, b] = clients.map((c) => new ListenerBuckets(c, prefix));
  });
  afterAll(async () => {
    await deleteKeys(clients[0], `${prefix}:*`);
    await Promise.all(clients.map((c) => c.quit()));
  });

  it('gives one token, then puts the next ones back one interval apart, whichever replica asks', async () => {
    const origin = 'http://hooks.example:80';
    const started = Date.now();
    const waits = [];
    for (let i = 0; i < 5; i++) waits.push(await (i % 2 ? b : a).take(merchant, origin, 5, false));
    const took = Date.now() - started;
    expect(waits[0]).toBe(0);
    // The k-th put back is due k × 200 ms after the token was taken (+ the 5 ms slack the caller adds).
    waits.slice(1).forEach((w, i) => {
      expect(w).toBeLessThanOrEqual((i + 1) * 200 + 5 + 1);
      expect(w).toBeGreaterThanOrEqual((i + 1) * 200 + 5 - took - 1);
    });
    // Another listener of the merchant has its own bucket.
    expect(await b.take(merchant, 'http://other.example:80', 5, false)).toBe(0);
  });

  it('a new delivery waits behind those put back; a returning one takes the token its turn brings', async () => {
    const origin = 'http://queue.example:80';
    expect(await a.take(merchant, origin, 5, false)).toBe(0);
    const first = await a.take(merchant, origin, 5, false); // put back: due in ~200 ms
    await sleep(first + 10);
    // Its turn: a newcomer does not get the token (someone put back is due: it waits an interval
    // less however late this process woke up on a loaded machine), the returning one does.
    expect(await b.take(merchant, origin, 5, false)).toBeGreaterThan(0);
    expect(await a.take(merchant, origin, 5, true)).toBe(0);
    // No token left now: even a returning delivery is put back (to the end of the line).
    expect(await b.take(merchant, origin, 5, true)).toBeGreaterThan(0);
  });

  it('holds a burst of a tenth of a second above 20/s', async () => {
    const origin = 'http://fast.example:80';
    const started = Date.now();
    const waits = await Promise.all(Array.from({ length: 12 }, (_, i) => (i % 2 ? a : b).take(merchant, origin, 100, false)));
    const elapsed = Date.now() - started;
    // 100/s: 10 tokens held at once; the rest put back 10 ms apart. On a loaded machine the twelve
    // calls may span more than 10 ms, and the bucket earns one token per 10 ms meanwhile: no more.
    const admitted = waits.filter((w) => w === 0).length;
    expect(admitted).toBeGreaterThanOrEqual(10);
    expect(admitted).toBeLessThanOrEqual(Math.min(12, 10 + Math.floor(elapsed / 10)));
  });
});

/**
 * The per-listener webhook throttle end to end (issue 16): a merchant's throttle of 5 deliveries per
 * second holds for each of its listeners across TWO notifier replicas (the bucket is in Redis),
 * throttled deliveries are put back rather than attempted (no attempt spent, the listener not marked
 * failing, each delivered exactly once), another listener of the same merchant keeps its own pace,
 * and "off" lifts it. Set from the CLI and from the console (operator only, audited alike).
 */
describe('webhook throttle: per listener, across notifier replicas', () => {
  let stack: Stack;
  let second: AppHandle;
  let shop: MerchantCredentials;
  let slow: Listener;
  let other: Listener;
  let db: Client;
  const suffix = randomBytes(3).toString('hex');
  const tokens = { viewer: '', operator: '' };
  const arrivals = { slow: [] as number[], other: [] as number[] };

  const sale = async (urlReturn: string): Promise<string> => {
    const res = await receiverOf(stack.baseUrl, shop)('sale', saleBody(5_000, urlReturn));
    expect(res.json).toMatchObject({ status: '8' });
    return res.json.transactionId as string;
  };
  /** `urls` as sales, at most 8 at a time. */
  const sales = async (urls: string[]): Promise<string[]> => {
    const ids: string[] = new Array(urls.length);
    let next = 0;
    await Promise.all(
      Array.from({ length: 8 }, async () => {
        while (next < urls.length) {
          const i = next++;
          ids[i] = await sale(urls[i]);
        }
      }),
    );
    return ids;
  };
  const metricsOf = async (app: AppHandle) => (await fetch(`http://127.0.0.1:${app.healthPort}/metrics`)).text();
  const throttledTotal = async () =>
    metric(await metricsOf(stack.notifier), 'webhook_deliveries_throttled_total') +
    metric(await metricsOf(second), 'webhook_deliveries_throttled_total');
  const setThrottle = (value: string, token?: string) =>
    runCliRaw(
      ['merchant:set-webhook-throttle', '--merchant', shop.merchantId, '--per-second', value],
      token ? { GATEWAY_OPERATOR_TOKEN: token } : {},
    );

  beforeAll(async () => {
    db = new Client({ connectionString: process.env.DATABASE_URL });
    await db.connect();
    slow = await new Listener().start();
    other = await new Listener().start();
    slow.on('/hook', () => (arrivals.slow.push(Date.now()), { status: 200 }));
    other.on('/hook', () => (arrivals.other.push(Date.now()), { status: 200 }));
    stack = await startStack({}, { withConsole: true, envFor: { notifier: NOTIFIER_ENV } });
    // A second notifier replica on the same database and Redis, with a health port of its own.
    second = await startApp('notifier', NOTIFIER_ENV, { label: 'notifier-2' });
    shop = await createMerchant('webhook throttle shop');
    for (const role of ['viewer', 'operator'] as const)
      tokens[role] = (await runCli<{ token: string }>(['operator:create', '--name', `wt-${role}-${suffix}`, '--role', role])).token;
  });

  afterAll(async () => {
    await second?.stop();
    await stack?.stop();
    await slow?.stop();
    await other?.stop();
    await db?.end();
  });

  it('the CLI sets the throttle (operator role), refuses a bad value naming the option, and listener:list shows it', async () => {
    const refused = await setThrottle(String(PER_S), tokens.viewer);
    expect(refused.code).not.toBe(0);
    expect(refused.stderr).toMatch(/operator/);
    for (const bad of ['0', '10001', '2.5', 'fast', ''])
      expect(JSON.parse((await setThrottle(bad, tokens.operator)).stderr).error).toContain(
        '--per-second must be a whole number of deliveries per second from 1 to 10000, or "off"',
      );
    const set = await setThrottle(String(PER_S), tokens.operator);
    expect(set.code).toBe(0);
    expect(set.json).toEqual({ merchantId: shop.merchantId, webhookThrottlePerS: PER_S });
    const audited = (
      await db.query(`SELECT operator_name, target, outcome FROM audit_events WHERE action = 'merchant:set-webhook-throttle' ORDER BY id`)
    ).rows;
    expect(audited).toEqual(
      expect.arrayContaining([
        { operator_name: `wt-viewer-${suffix}`, target: shop.merchantId, outcome: 'refused' },
        { operator_name: `wt-operator-${suffix}`, target: shop.merchantId, outcome: 'ok' },
      ]),
    );
  });

  it(`holds each listener to ${PER_S}/s across two replicas, puts deliveries back without spending attempts, delivers each once`, async () => {
    const before = await throttledTotal();
    const slowUrls = Array.from({ length: THROTTLED_SALES }, () => slow.url('/hook'));
    const otherUrls = Array.from({ length: 4 }, () => other.url('/hook'));
    // The other listener's sales go in the middle of the burst: they meet the slow listener's backlog.
    const ids = await sales([...slowUrls.slice(0, 20), ...otherUrls, ...slowUrls.slice(20)]);
    const salesDone = Date.now();
    await eventually(() => expect(slow.at('/hook').length).toBeGreaterThanOrEqual(THROTTLED_SALES), { timeoutMs: 60_000, intervalMs: 200 });
    await eventually(() => expect(other.at('/hook').length).toBeGreaterThanOrEqual(4), { timeoutMs: 10_000, intervalMs: 200 });
    await sleep(1_000); // nothing more should come

    // Exactly once: one request per delivery, each delivery's own webhook-id.
    expect(slow.at('/hook')).toHaveLength(THROTTLED_SALES);
    expect(other.at('/hook')).toHaveLength(4);
    const webhookIds = [...slow.at('/hook'), ...other.at('/hook')].map((r) => r.headers['webhook-id']);
    expect(new Set(webhookIds).size).toBe(ids.length);

    // The bound. Below 20/s the bucket holds one token, so Redis (one clock for both replicas) hands
    // tokens out at least 200 ms apart: at most 5 in any [t, t + 1 s) of Redis time. What the listener
    // sees is that time plus each request's own way there (signing, connecting, sending: a few ms,
    // more on a loaded machine), which can move one token's request into the next window: hence at
    // most 5 + 1 per window at the listener. And overall no faster than 5/s: 40 deliveries span at
    // least 39 × 200 ms, less one token's worth of that jitter.
    expect(busiestSecond(arrivals.slow)).toBeLessThanOrEqual(PER_S + 1);
    const span = Math.max(...arrivals.slow) - Math.min(...arrivals.slow);
    expect(span).toBeGreaterThanOrEqual((THROTTLED_SALES - 1) * (1_000 / PER_S) - 200);

    // Both replicas delivered and both put deliveries back (the bucket is theirs together).
    for (const app of [stack.notifier, second]) {
      const text = await metricsOf(app);
      expect(metric(text, 'webhook_deliveries_total', 'outcome="succeeded"')).toBeGreaterThan(0);
      expect(metric(text, 'webhook_deliveries_throttled_total')).toBeGreaterThan(0);
    }
    expect((await throttledTotal()) - before).toBeGreaterThanOrEqual(THROTTLED_SALES / 2);

    // The other listener has its own bucket: its 4 arrive at its own pace (~0.6 s), long before the
    // slow listener's backlog (~8 s) is through.
    expect(Math.max(...arrivals.other) - salesDone).toBeLessThan(3_000);
    expect(Math.max(...arrivals.slow) - Math.max(...arrivals.other)).toBeGreaterThan(3_000);

    // Putting back is no attempt: one attempt each, succeeded, no error; the listeners are healthy.
    const rows = (
      await db.query(
        `SELECT d.status, d.attempts, d.last_error, count(a.*)::int AS recorded, count(a.error_class)::int AS errors
         FROM deliveries d LEFT JOIN delivery_attempts a ON a.delivery_id = d.id
         WHERE d.transaction_id = ANY($1::uuid[]) GROUP BY d.id`,
        [ids.map((id) => id.toLowerCase())],
      )
    ).rows;
    expect(rows).toHaveLength(ids.length);
    for (const r of rows) expect(r).toEqual({ status: 'succeeded', attempts: 1, last_error: null, recorded: 1, errors: 0 });
    const listeners = (
      await db.query(`SELECT state, failing_since, consecutive_failures FROM listeners WHERE merchant_id = $1`, [shop.internalId])
    ).rows;
    expect(listeners).toHaveLength(2);
    for (const l of listeners) expect(l).toEqual({ state: 'enabled', failing_since: null, consecutive_failures: 0 });

    const listed = await runCli<{ origin: string; webhookThrottlePerS: number | string }[]>([
      'listener:list',
      '--merchant',
      shop.merchantId,
    ]);
    expect(listed.map((l) => l.webhookThrottlePerS)).toEqual([PER_S, PER_S]);
  });

  it('"off" lifts the throttle (within the notifiers\' 5 s cache)', async () => {
    const set = await setThrottle('off', tokens.operator);
    expect(set.json).toEqual({ merchantId: shop.merchantId, webhookThrottlePerS: 'off' });
    await sleep(5_500);
    const before = await throttledTotal();
    arrivals.slow.length = 0;
    await sales(Array.from({ length: 20 }, () => slow.url('/hook')));
    await eventually(() => expect(arrivals.slow.length).toBe(20), { timeoutMs: 30_000, intervalMs: 100 });
    // Paced at 5/s they would span at least 19 × 200 ms = 3.8 s; nothing was put back.
    expect(Math.max(...arrivals.slow) - Math.min(...arrivals.slow)).toBeLessThan(3_800);
    expect(await throttledTotal()).toBe(before);
    expect(
      (await runCli<{ webhookThrottlePerS: number | string }[]>(['listener:list', '--merchant', shop.merchantId]))[0].webhookThrottlePerS,
    ).toBe('off');
  });

  describe('console', () => {
    /** A signed-in console session over plain HTTP: its cookies, and the CSRF token of the last page read. */
    const signIn = async (token: string) => {
      const jar = new Map<string, string>();
      const keep = (res: Response) => {
        for (const c of res.headers.getSetCookie()) {
          const [pair] = c.split(';');
          const at = pair.indexOf('=');
          jar.set(pair.slice(0, at), pair.slice(at + 1));
        }
        return res;
      };
      const cookie = () => [...jar].map(([k, v]) => `${k}=${v}`).join('; ');
      const csrfOf = (text: string) => /name="_csrf" value="([^"]+)"/.exec(text)?.[1] ?? '';
      const get = async (path: string) => {
        const res = keep(await fetch(`${stack.consoleUrl}${path}`, { headers: { cookie: cookie() }, redirect: 'manual' }));
        return { status: res.status, text: await res.text() };
      };
      const postForm = async (path: string, form: Record<string, string>, csrf: string) => {
        const res = keep(
          await fetch(`${stack.consoleUrl}${path}`, {
            method: 'POST',
            headers: { cookie: cookie(), 'content-type': 'application/x-www-form-urlencoded' },
            body: new URLSearchParams({ ...form, _csrf: csrf }).toString(),
            redirect: 'manual',
          }),
        );
        return { status: res.status, location: res.headers.get('location'), text: await res.text() };
      };
      const signedIn = await postForm('/console/sign-in', { token }, csrfOf((await get('/console/sign-in')).text));
      expect(signedIn.status).toBe(303);
      return { get, postForm, csrfOf };
    };
    const stored = async () =>
      (await db.query('SELECT webhook_throttle_per_s AS v FROM merchants WHERE id = $1', [shop.internalId])).rows[0].v as number | null;

    it('an operator sets it from the merchant page; a viewer is refused 403; a bad value is a 400 naming the field', async () => {
      const path = `/console/merchants/${shop.merchantId}`;
      const operator = await signIn(tokens.operator);
      const page = await operator.get(path);
      expect(page.status).toBe(200);
      expect(page.text).toContain('off (no throttle)');
      const saved = await operator.postForm(`${path}/webhook-throttle`, { perSecond: '7' }, operator.csrfOf(page.text));
      expect(saved).toMatchObject({ status: 303, location: path });
      expect(await stored()).toBe(7);
      const after = (await operator.get(path)).text;
      expect(after).toContain('7 deliveries per second to each listener');
      expect(after).toContain('Saved.');

      for (const bad of ['0', '10001', 'ten', '']) {
        const res = await operator.postForm(
          `${path}/webhook-throttle`,
          { perSecond: bad },
          operator.csrfOf((await operator.get(path)).text),
        );
        expect(res.status).toBe(400);
        expect(res.text).toContain('Deliveries per second (perSecond) must be a whole number');
      }
      expect(await stored()).toBe(7);
      // Without a CSRF token: refused before anything is read.
      expect((await operator.postForm(`${path}/webhook-throttle`, { perSecond: '9' }, 'forged')).status).toBe(403);

      const viewer = await signIn(tokens.viewer);
      const viewed = await viewer.get(path);
      expect(viewed.status).toBe(200);
      expect(viewed.text).toContain('needs the operator role');
      const refused = await viewer.postForm(`${path}/webhook-throttle`, { perSecond: '9' }, viewer.csrfOf(viewed.text));
      expect(refused.status).toBe(403);
      expect(await stored()).toBe(7);

      expect((await operator.get('/console/merchants/0000000000')).status).toBe(404);
      const off = await operator.postForm(
        `${path}/webhook-throttle`,
        { perSecond: 'OFF' },
        operator.csrfOf((await operator.get(path)).text),
      );
      expect(off.status).toBe(303);
      expect(await stored()).toBeNull();

      const audited = (
        await db.query(
          `SELECT operator_name, outcome, detail->>'via' AS via, detail->>'perSecond' AS per_second FROM audit_events
           WHERE action = 'merchant:set-webhook-throttle' AND detail->>'via' = 'console' AND operator_name LIKE $1 ORDER BY id`,
          // This suite's operators only: other suites of the lane change throttles from the console too.
          [`wt-%-${suffix}`],
        )
      ).rows;
      expect(audited).toEqual([
        { operator_name: `wt-operator-${suffix}`, outcome: 'attempted', via: 'console', per_second: '7' },
        { operator_name: `wt-operator-${suffix}`, outcome: 'ok', via: 'console', per_second: '7' },
        { operator_name: `wt-viewer-${suffix}`, outcome: 'refused', via: 'console', per_second: null },
        { operator_name: `wt-operator-${suffix}`, outcome: 'attempted', via: 'console', per_second: 'off' },
        { operator_name: `wt-operator-${suffix}`, outcome: 'ok', via: 'console', per_second: 'off' },
      ]);
    });
  });
});
