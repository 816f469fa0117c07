import { Client } from 'pg';
import { run, sleep } from '../../scripts/lib/processes';
import {
  AppHandle,
  createMerchant,
  HttpResult,
  MerchantCredentials,
  post,
  PrivateServer,
  runCli,
  runCliRaw,
  Stack,
  startApp,
  startPrivateRedis,
  startStack,
} from '../support/stack';
import { SANDBOX_CARDS, visaEndingIn } from '../fixtures/cards';

jest.setTimeout(180_000);

/** A flood generator for `node -e`: FLOOD = {targets: [url, body][], ms, rate, inFlight}; prints the statuses as JSON. */
const FLOOD = `
const { targets, ms, rate, inFlight } = JSON.parse(process.env.FLOOD);
const statuses = [];
let open = 0;
const start = Date.now();
const send = (i) => {
  const [url, body] = targets[i % targets.length];
  open++;
  fetch(url, { method: 'POST', headers: { 'content-type': 'application/json' }, body })
    .then(async (r) => { await r.arrayBuffer(); statuses.push(r.status); }, () => statuses.push(0))
    .finally(() => open--);
};
(async () => {
  for (let sent = 0; Date.now() - start < ms; await new Promise((r) => setTimeout(r, 5))) {
    for (const due = ((Date.now() - start) / 1000) * rate; sent < due && open < inFlight; sent++) send(sent);
  }
  while (open > 0) await new Promise((r) => setTimeout(r, 10));
  process.stdout.write(JSON.stringify(statuses));
})();
`;

// eslint-disable-next-line @typescript-eslint/no-explicit-any
type Json = Record<string, any>;

/** The stack's defaults: small, so a budget is spent with a few requests. No burst, except where a test asks. */
const WRITES_PER_S = 5;
const READS_PER_S = 5;
const LIMITS = {
  RATE_LIMIT_WRITES_PER_S: String(WRITES_PER_S),
  RATE_LIMIT_READS_PER_S: String(READS_PER_S),
  RATE_LIMIT_BURST_S: '0',
  MERCHANT_CACHE_MS: '200',
};

/**
 * Issue 14 item 7: per-merchant budgets in Redis shared by every api replica; over a budget a 429
 * with Retry-After and the wire body, nothing recorded.
 *
 * A budget is counted in one-second windows, each started by the first request after the last
 * ended, so how many requests pass depends on how many windows a burst of them spans: each check
 * bounds it by the time the requests took (`windowsIn`), which on a quick machine is one window.
 */
describe('per-merchant rate limits', () => {
  let stack: Stack;
  let db: Client;
  let cardSeries = 100;

  const envelope = (m: { merchantId: string; merchantKey: string }, op: string, body: unknown) => ({
    'transaction-request': { version: '1.0.0', verification: { merchantId: m.merchantId, merchantKey: m.merchantKey }, [op]: body },
  });
  let ref = 0;
  const sale = (baseUrl: string, m: MerchantCredentials, key?: string) =>
    post(
      baseUrl,
      '/v1/receiver',
      envelope(m, 'sale', {
        order: { reference: `RL-${++ref}`, totalAmount: 1000 },
        payment: {
          acquirer: 26,
          method: 1,
          amount: 1000,
          currency: '986',
          country: 'BRA',
          numberOfPayments: 1,
          flag: 'visa',
          cardHolder: 'RATE LIMIT',
          cardNumber: SANDBOX_CARDS[1],
          cardSecurityCode: '0917',
          cardExpirationDate: '203012',
        },
      }),
      key ? { 'idempotency-key': key } : {},
    );
  /** A token/add of a card no other request sends (so each admitted one is a new vault row). */
  const tokenAdd = (baseUrl: string, m: MerchantCredentials, key?: string) =>
    post(
      baseUrl,
      '/v1/token/add',
      envelope(m, 'tokencard', {
        cardNumber: visaEndingIn(1, cardSeries++),
        cardHolder: 'RATE LIMIT',
        cardExpirationDate: '203012',
        flag: 'visa',
      }),
      key ? { 'idempotency-key': key } : {},
    );
  /** A read that touches nothing: a report of a reference that does not exist (404 once admitted). */
  const report = (baseUrl: string, m: { merchantId: string; merchantKey: string }) =>
    post(baseUrl, '/v1/receiver', envelope(m, 'report', { reference: 'RL-none' }));

  /** Fires all at once; the answers, and how many one-second windows their span could cover. */
  async function burst(requests: (() => Promise<HttpResult>)[]): Promise<{ answers: HttpResult[]; windows: number }> {
    const started = Date.now();
    const answers = await Promise.all(requests.map((r) => r()));
    return { answers, windows: windowsIn(Date.now() - started) };
  }
  const windowsIn = (ms: number) => Math.floor(ms / 1000) + 1;
  const limited = (answers: HttpResult[]) => answers.filter((a) => a.status === 429);
  const admitted = (answers: HttpResult[]) => answers.filter((a) => a.status !== 429);
  const times = <T>(n: number, f: (i: number) => T): T[] => Array.from({ length: n }, (_, i) => f(i));

  const rowsOf = async (m: MerchantCredentials) => {
    const count = async (table: string) =>
      Number((await db.query(`SELECT count(*)::int AS n FROM ${table} WHERE merchant_id = $1`, [m.internalId])).rows[0].n);
    return {
      transactions: await count('transactions'),
      token_cards: await count('vault.token_cards'),
      idempotency_keys: await count('idempotency_keys'),
    };
  };
  const expect429 = (res: HttpResult, what: string) => {
    expect(res.status).toBe(429);
    expect(res.headers['retry-after']).toMatch(/^[1-9]\d*$/);
    expect(res.json).toEqual({
      transactionId: '',
      status: { code: '429', message: 'Too Many Requests' },
      result: {
        error: {
          code: '429',
          action: 'Wait the seconds in the Retry-After header, then send the request again (with the same Idempotency-Key).',
          message: 'Too Many Requests',
          details: `Too many ${what} requests for this merchant; nothing was done. Retry after ${res.headers['retry-after']} s.`,
          moreInfo: 'See the error code table in the README (code 429).',
          parameter: '',
          errors: [],
        },
      },
    });
  };
  const WRITES = 'sale, authorize, capture, cancel and token/add';
  const READS = 'report and token/retrieve';
  /** Waits until the merchant's current one-second windows have surely ended. */
  const nextWindow = () => sleep(1_100);

  beforeAll(async () => {
    stack = await startStack(LIMITS);
    db = new Client({ connectionString: process.env.DATABASE_URL });
    await db.connect();
  });

  afterAll(async () => {
    await db?.end();
    await stack?.stop();
  });

  it('over the write budget: 429 with Retry-After and the wire body, and nothing of the refused requests is recorded', async () => {
    const m = await createMerchant('rate limit writes shop');
    const before = await rowsOf(m);
    const { answers: sales, windows: w1 } = await burst(times(16, (i) => () => sale(stack.baseUrl, m, `rl-sale-${i}`)));
    await nextWindow();
    const { answers: adds, windows: w2 } = await burst(times(16, (i) => () => tokenAdd(stack.baseUrl, m, `rl-add-${i}`)));
    for (const [answers, windows] of [
      [sales, w1],
      [adds, w2],
    ] as const) {
      expect(admitted(answers).length).toBeGreaterThanOrEqual(WRITES_PER_S);
      expect(admitted(answers).length).toBeLessThanOrEqual(WRITES_PER_S * windows);
      // 202: a sale whose outcome took longer than SALE_SYNC_WAIT_MS on a busy machine; recorded all the same.
      for (const a of admitted(answers)) expect([200, 202]).toContain(a.status);
      expect(limited(answers).length).toBeGreaterThan(0);
      for (const a of limited(answers)) expect429(a, WRITES);
    }
    // Exactly the admitted requests left rows: a sale each, a vault row per card, an idempotency record each.
    const after = await rowsOf(m);
    expect(after).toEqual({
      transactions: before.transactions + admitted(sales).length,
      token_cards: before.token_cards + admitted(adds).length,
      idempotency_keys: before.idempotency_keys + admitted(sales).length + admitted(adds).length,
    });
  });

  it('a refused request is free to retry with its Idempotency-Key once the window has passed (the limit refills)', async () => {
    const m = await createMerchant('rate limit refill shop');
    const { answers } = await burst(times(12, (i) => () => tokenAdd(stack.baseUrl, m, `rl-refill-${i}`)));
    const refused = limited(answers);
    expect(refused.length).toBeGreaterThan(0);
    const wait = Number(refused[0].headers['retry-after']);
    expect(wait).toBe(1); // a one-second window: never more than a second away
    await sleep(wait * 1000 + 100);
    const again = await tokenAdd(stack.baseUrl, m, 'rl-refill-again');
    expect(again.status).toBe(200);
    expect(again.headers['idempotent-replayed']).toBeUndefined();
  });

  it('reads and writes are separate budgets', async () => {
    const m = await createMerchant('rate limit separate budgets shop');
    // Writes flooded while a few reads go: the reads all pass.
    const w = await burst([
      ...times(15, () => () => tokenAdd(stack.baseUrl, m)),
      ...times(READS_PER_S - 1, () => () => report(stack.baseUrl, m)),
    ]);
    expect(limited(w.answers.slice(0, 15)).length).toBeGreaterThan(0);
    expect(w.answers.slice(15).map((a) => a.status)).toEqual(times(READS_PER_S - 1, () => 404));
    await nextWindow();
    // Reads flooded while a few writes go: the writes all pass.
    const r = await burst([
      ...times(15, () => () => report(stack.baseUrl, m)),
      ...times(WRITES_PER_S - 1, () => () => tokenAdd(stack.baseUrl, m)),
    ]);
    expect(limited(r.answers.slice(0, 15)).length).toBeGreaterThan(0);
    for (const a of limited(r.answers)) expect429(a, READS);
    expect(r.answers.slice(15).map((a) => a.status)).toEqual(times(WRITES_PER_S - 1, () => 200));
  });

  it('an unauthenticated caller does not spend the merchant budget', async () => {
    const m = await createMerchant('rate limit auth shop');
    const wrong = await burst(times(20, () => () => report(stack.baseUrl, { merchantId: m.merchantId, merchantKey: 'mk_wrong' })));
    expect(wrong.answers.map((a) => a.status)).toEqual(times(20, () => 401));
    const right = await burst(times(READS_PER_S, () => () => report(stack.baseUrl, m)));
    expect(right.answers.map((a) => a.status)).toEqual(times(READS_PER_S, () => 404));
  });

  it('merchant:set-limits overrides the defaults, applies within MERCHANT_CACHE_MS, and "default" clears it', async () => {
    const m = await createMerchant('rate limit override shop');
    const set = (...args: string[]) => runCli<Json>(['merchant:set-limits', '--merchant', m.merchantId, ...args]);
    const cacheExpired = () => sleep(400); // MERCHANT_CACHE_MS is 200 here

    expect(await set('--reads', '100')).toEqual({ merchantId: m.merchantId, writes: 'default', reads: 100 });
    await cacheExpired();
    const high = await burst(times(30, () => () => report(stack.baseUrl, m)));
    expect(limited(high.answers)).toEqual([]);

    await nextWindow();
    // By UUID too; the writes stay as they were.
    expect(await runCli<Json>(['merchant:set-limits', '--merchant', m.internalId.toUpperCase(), '--reads', '1'])).toEqual({
      merchantId: m.merchantId,
      writes: 'default',
      reads: 1,
    });
    await cacheExpired();
    const low = await burst(times(10, () => () => report(stack.baseUrl, m)));
    expect(admitted(low.answers).length).toBeGreaterThanOrEqual(1);
    expect(admitted(low.answers).length).toBeLessThanOrEqual(1 * low.windows);

    await nextWindow();
    expect(await set('--reads', 'default', '--writes', '7')).toEqual({ merchantId: m.merchantId, writes: 7, reads: 'default' });
    expect(
      (await db.query('SELECT rate_limit_reads_per_s AS r, rate_limit_writes_per_s AS w FROM merchants WHERE id = $1', [m.internalId]))
        .rows[0],
    ).toEqual({ r: null, w: 7 });
    await cacheExpired();
    const back = await burst(times(15, () => () => report(stack.baseUrl, m)));
    expect(admitted(back.answers).length).toBeGreaterThanOrEqual(READS_PER_S);
    expect(admitted(back.answers).length).toBeLessThanOrEqual(READS_PER_S * back.windows);
  });

  it('merchant:set-limits refuses bad input with an error naming the option, and changes nothing', async () => {
    const m = await createMerchant('rate limit bad input shop');
    await runCli(['merchant:set-limits', '--merchant', m.merchantId, '--writes', '40']);
    const tries: [string[], string][] = [
      [['--reads', '0'], '--reads must be a whole number of requests per second from 1 to 1000000, or \\"default\\"'],
      [['--writes', '2.5'], '--writes must be a whole number'],
      [['--writes', '1000001'], '--writes must be a whole number'],
      [['--reads', 'lots'], '--reads must be a whole number'],
      // A good value beside a bad one: neither is written.
      [['--reads', '10', '--writes', '-1'], '--writes must be a whole number'],
      [[], 'give --reads and/or --writes'],
    ];
    for (const [args, message] of tries) {
      const run = await runCliRaw(['merchant:set-limits', '--merchant', m.merchantId, ...args]);
      expect({ args, code: run.code }).toEqual({ args, code: 1 });
      expect(run.stderr).toContain(message);
    }
    const unknown = await runCliRaw(['merchant:set-limits', '--merchant', '1234567897', '--reads', '10']);
    expect(unknown.code).toBe(1);
    expect(unknown.stderr).toContain('--merchant: no merchant');
    expect(
      (await db.query('SELECT rate_limit_reads_per_s AS r, rate_limit_writes_per_s AS w FROM merchants WHERE id = $1', [m.internalId]))
        .rows[0],
    ).toEqual({ r: null, w: 40 });
    // The database holds the same range on its own.
    await expect(db.query('UPDATE merchants SET rate_limit_reads_per_s = 0 WHERE id = $1', [m.internalId])).rejects.toThrow(
      /merchants_rate_limit_reads_range/,
    );
  });

  describe('with a second api replica on the same Redis', () => {
    let second: AppHandle;

    beforeAll(async () => {
      second = await startApp('api', LIMITS, { label: 'api-replica' });
    });

    afterAll(async () => {
      await second?.stop();
    });

    it('two replicas share one budget', async () => {
      const m = await createMerchant('rate limit replicas shop');
      const { answers, windows } = await burst(times(24, (i) => () => report(i % 2 ? second.url : stack.baseUrl, m)));
      // Separate budgets would let each replica pass READS_PER_S per window.
      expect(admitted(answers).length).toBeGreaterThanOrEqual(READS_PER_S);
      expect(admitted(answers).length).toBeLessThanOrEqual(READS_PER_S * windows);
      // And each replica refuses once the budget is spent, wherever it was spent.
      expect(limited(answers.filter((_, i) => i % 2)).length).toBeGreaterThan(0);
      expect(limited(answers.filter((_, i) => !(i % 2))).length).toBeGreaterThan(0);
    });

    it("a merchant flooding over its limit changes neither another merchant's answers nor, loosely, their latency", async () => {
      const flooder = await createMerchant('rate limit flooder');
      // The same flood from a merchant whose budget holds it: what the flood costs when admitted.
      const busy = await createMerchant('rate limit busy shop');
      const quiet = await createMerchant('rate limit quiet shop');
      for (const m of [busy, quiet])
        await runCli(['merchant:set-limits', '--merchant', m.merchantId, '--reads', '10000', '--writes', '10000']);
      await sleep(400);
      const { token } = { token: (await tokenAdd(stack.baseUrl, quiet)).json.TokenCard as string };
      const retrieve = (baseUrl: string) => post(baseUrl, '/v1/token/retrieve', envelope(quiet, 'retrieve-token', { token }));

      /** The quiet merchant's sequential requests for `ms`, alternating replicas: statuses and latencies. */
      const quietFor = async (ms: number) => {
        const statuses: number[] = [];
        const latencies: number[] = [];
        for (let i = 0, end = Date.now() + ms; Date.now() < end; i++) {
          const t = performance.now();
          const res = i % 2 ? await retrieve(second.url) : await report(stack.baseUrl, quiet);
          latencies.push(performance.now() - t);
          statuses.push(res.status);
        }
        latencies.sort((a, b) => a - b);
        return { statuses, p50: latencies[Math.floor(latencies.length * 0.5)], p95: latencies[Math.floor(latencies.length * 0.95)] };
      };

      // A flood of reports on both replicas, from a process of its own (so its client work does not
      // delay this process's timing of the quiet merchant): 100 requests/s, open loop, at most 16
      // in flight (a shared 2-core machine): 20 times the flooder's budget of 5/s.
      const floodFor = async (m: MerchantCredentials, ms: number): Promise<number[]> => {
        const body = JSON.stringify(envelope(m, 'report', { reference: 'RL-none' }));
        const targets = [
          [`${stack.baseUrl}/v1/receiver`, body],
          [`${second.url}/v1/receiver`, body],
        ];
        const r = await run(process.execPath, ['-e', FLOOD], {
          env: { ...process.env, FLOOD: JSON.stringify({ targets, ms, rate: 100, inFlight: 16 }) },
          timeoutMs: ms + 30_000,
        });
        if (r.code !== 0) throw new Error(`flood failed: ${r.stderr}`);
        return JSON.parse(r.stdout) as number[];
      };
      const beside = async (m: MerchantCredentials) => {
        const flood = floodFor(m, 3_600);
        await sleep(600); // the flood's process starting
        const measured = await quietFor(3_000);
        return { ...measured, flood: await flood };
      };

      const calm = await quietFor(2_000);
      const refused = await beside(flooder);
      const admittedFlood = await beside(busy);

      // The flood over its limit was mostly refused, the same flood within its budget never, and
      // the quiet merchant got its own answers throughout.
      expect(refused.flood.filter((s) => s === 429).length).toBeGreaterThan(refused.flood.length / 2);
      expect(admittedFlood.flood.filter((s) => s !== 404)).toEqual([]);
      for (const r of [calm, refused, admittedFlood]) {
        expect(r.statuses.length).toBeGreaterThanOrEqual(6);
        expect(new Set(r.statuses.map((s, i) => `${i % 2 ? 'retrieve' : 'report'} ${s}`))).toEqual(new Set(['report 404', 'retrieve 200']));
      }
      const ms = (x: number) => `${x.toFixed(1)} ms`;
      process.stdout.write(
        `quiet merchant p50 / p95: alone ${ms(calm.p50)} / ${ms(calm.p95)}; beside a refused flood (${refused.flood.length} requests, ${refused.flood.filter((s) => s === 429).length} refused) ` +
          `${ms(refused.p50)} / ${ms(refused.p95)}; beside the same flood admitted (${admittedFlood.flood.length} requests) ${ms(admittedFlood.p50)} / ${ms(admittedFlood.p95)}\n`,
      );
      // Loose (a noisy shared machine): a refused flood slows the others no more than the same
      // flood admitted would (its refusals cost no Redis or database work), and not beyond reason.
      expect(refused.p50).toBeLessThan(admittedFlood.p50 * 2 + 50);
      expect(refused.p50).toBeLessThan(calm.p50 * 10 + 250);
    });
  });

  it('a burst allowance lets a merchant go over its rate once per burst window', async () => {
    // 3 reads/s, and 2 s worth (6) more per 60 s window: 9 in the first second, 3 in the next.
    const api = await startApp(
      'api',
      { ...LIMITS, RATE_LIMIT_READS_PER_S: '3', RATE_LIMIT_BURST_S: '2', RATE_LIMIT_BURST_WINDOW_S: '60' },
      { label: 'api-burst' },
    );
    try {
      const m = await createMerchant('rate limit burst shop');
      const first = await burst(times(20, () => () => report(api.url, m)));
      expect(admitted(first.answers).length).toBeGreaterThanOrEqual(3 + 6);
      expect(admitted(first.answers).length).toBeLessThanOrEqual(3 * first.windows + 6);
      for (const a of limited(first.answers)) expect(a.headers['retry-after']).toBe('1');
      await nextWindow();
      const second = await burst(times(20, () => () => report(api.url, m)));
      expect(admitted(second.answers).length).toBeGreaterThanOrEqual(3);
      expect(admitted(second.answers).length).toBeLessThanOrEqual(3 * second.windows);
    } finally {
      await api.stop();
    }
  });

  it('Redis down: each replica goes on with the same budget in process (fail open, still limited)', async () => {
    const redis: PrivateServer = await startPrivateRedis();
    const api = await startApp('api', { ...LIMITS, REDIS_URL: redis.url, REDIS_CLUSTER_NODES: '' }, { label: 'api-redis-down' });
    try {
      const m = await createMerchant('rate limit redis down shop');
      const up = await burst(times(12, () => () => report(api.url, m)));
      expect(admitted(up.answers).length).toBeLessThanOrEqual(READS_PER_S * up.windows);
      await redis.stop();
      await nextWindow();
      // Reports need only Postgres: they still pass up to the budget, and past it are refused.
      const down = await burst(times(12, () => () => report(api.url, m)));
      expect(admitted(down.answers).map((a) => a.status)).toEqual(times(admitted(down.answers).length, () => 404));
      expect(admitted(down.answers).length).toBeGreaterThanOrEqual(READS_PER_S);
      expect(admitted(down.answers).length).toBeLessThanOrEqual(READS_PER_S * down.windows);
      for (const a of limited(down.answers)) expect429(a, READS);
      await api.waitForLog('rate limiter: Redis unavailable');
    } finally {
      await api.stop();
      await redis.destroy();
    }
  });
});
