import { randomUUID } from 'node:crypto';
import { Client } from 'pg';
import { sleep } from '../../scripts/lib/processes';
import {
  AppHandle,
  createMerchant,
  HttpResult,
  jsonOf,
  MerchantCredentials,
  post,
  PrivateServer,
  runCli,
  startApp,
  startPrivateRedis,
} from '../support/stack';

jest.setTimeout(240_000);

/** The documented default (docs/configuration.md, docs/operations/rate-limits.md): failures per address per minute. */
const LIMIT = 20;
/** The documented defaults of the portal's per-link budgets (per minute). */
const PORTAL_REPLAYS = 10;
const PORTAL_OPENS = 20;
/** The test run sets a high AUTH_FAILURE_LIMIT for every suite (global-setup.ts): these apps get the documented defaults. */
const DEFAULTS = {
  AUTH_FAILURE_LIMIT: '',
  AUTH_FAILURE_WINDOW_S: '',
  PORTAL_OPEN_LIMIT: '',
  PORTAL_REPLAY_LIMIT: '',
  PORTAL_LINK_WINDOW_S: '',
};

interface Answer {
  status: number;
  headers: Headers;
  text: string;
  cookies: string[];
}

/** A plain fetch that keeps the answer's Set-Cookie lines and never follows a redirect. */
async function send(url: string, init: RequestInit = {}): Promise<Answer> {
  const res = await fetch(url, { redirect: 'manual', ...init });
  return { status: res.status, headers: res.headers, text: await res.text(), cookies: res.headers.getSetCookie() };
}
/** "name=value" of each Set-Cookie line, as a Cookie header. */
const cookieHeader = (...lines: string[][]) =>
  lines
    .flat()
    .map((l) => l.split(';')[0])
    .join('; ');
const csrfOf = (html: string) => /name="_csrf" value="([^"]+)"/.exec(html)?.[1] ?? '';
const form = (fields: Record<string, string>) => new URLSearchParams(fields).toString();
const FORM = 'application/x-www-form-urlencoded';
const times = <T>(n: number, f: (i: number) => T): T[] => Array.from({ length: n }, (_, i) => f(i));

/**
 * Issue 32 finding 5 and 4: failed authentication is limited per client address on /v1,
 * /console/sign-in, /admin and /portal (429 with Retry-After once past AUTH_FAILURE_LIMIT a minute;
 * successes are not counted; Redis down fails open as the merchant budgets do), the client address
 * being the socket's unless the request came through a trusted proxy (TRUSTED_PROXIES); and a
 * portal link's opens and replays are limited per link, its opens audited once per window.
 *
 * Each api here has a QUEUE_PREFIX of its own, so its counters start empty and leave no blocked
 * address to the suites after this one.
 */
describe('limits on failed authentication (issue 32)', () => {
  let direct: AppHandle;
  let proxied: AppHandle;
  let proxiedConsole: AppHandle;
  let shop: MerchantCredentials;
  let db: Client;
  const prefix = (name: string) => `${process.env.QUEUE_PREFIX ?? 'gw'}${name}${process.pid}`;

  const envelope = (merchantId: string, merchantKey: string) => ({
    'transaction-request': { version: '1.0.0', verification: { merchantId, merchantKey }, report: { reference: 'AL-none' } },
  });
  /** A read that touches nothing: a report of a reference that does not exist (404 once authenticated). */
  const report = (app: AppHandle, merchantId: string, merchantKey: string, from?: string): Promise<HttpResult> =>
    post(app.url, '/v1/receiver', envelope(merchantId, merchantKey), from ? { 'x-forwarded-for': from } : {});
  const wrongKey = (app: AppHandle, from?: string) => report(app, shop.merchantId, 'not-the-key', from);

  const expectWire429 = (res: HttpResult) => {
    expect(res.status).toBe(429);
    expect(res.headers['retry-after']).toMatch(/^[1-9]\d*$/);
    expect(Number(res.headers['retry-after'])).toBeLessThanOrEqual(60);
    expect(res.json).toMatchObject({
      transactionId: '',
      status: { code: '429', message: 'Too Many Requests' },
      result: { error: { code: '429', message: 'Too Many Requests' } },
    });
    expect(res.json.result.error.details).toMatch(
      /^Too many failed authentications from this address; nothing was done\. Retry after \d+ s\.$/,
    );
  };

  beforeAll(async () => {
    db = new Client({ connectionString: process.env.DATABASE_URL });
    await db.connect();
    [direct, proxied, proxiedConsole] = await Promise.all([
      startApp('api', { ...DEFAULTS, QUEUE_PREFIX: prefix('ald') }, { label: 'api-auth-direct' }),
      startApp('api', { ...DEFAULTS, QUEUE_PREFIX: prefix('alp'), TRUSTED_PROXIES: '127.0.0.1' }, { label: 'api-auth-proxied' }),
      // The console, the portal and /admin, behind the same proxy (and counting in the same Redis).
      startApp('console', { ...DEFAULTS, QUEUE_PREFIX: prefix('alp'), TRUSTED_PROXIES: '127.0.0.1' }, { label: 'console-auth-proxied' }),
    ]);
    shop = await createMerchant('auth limits shop');
  });

  afterAll(async () => {
    await Promise.all([direct?.stop(), proxied?.stop(), proxiedConsole?.stop()]);
    await db?.end();
  });

  it('/v1: a flood of wrong keys from one address gets 429 with Retry-After (wire body) after the limit, and then the right key too', async () => {
    const answers: HttpResult[] = [];
    for (let i = 0; i < LIMIT + 10; i++) answers.push(await wrongKey(direct));
    expect(answers.slice(0, LIMIT).map((a) => a.status)).toEqual(times(LIMIT, () => 401));
    for (const a of answers.slice(LIMIT)) expectWire429(a);
    // While the address is blocked, the right key is refused too: no guess is answered.
    expectWire429(await report(direct, shop.merchantId, shop.merchantKey));
    // Not through a trusted proxy: X-Forwarded-For is the caller's own say, and ignored.
    expectWire429(await wrongKey(direct, '198.51.100.7'));
    expect(direct.log()).not.toMatch(/"statusCode":5\d\d/);
  });

  it('/v1 behind a trusted proxy: each client address has its own count; successes are not counted', async () => {
    const a = '203.0.113.10';
    const b = '203.0.113.11';
    for (let i = 0; i < LIMIT - 1; i++) expect((await wrongKey(proxied, a)).status).toBe(401);
    // Right keys between the failures: never counted, however many.
    for (let i = 0; i < 30; i++) expect((await report(proxied, shop.merchantId, shop.merchantKey, a)).status).toBe(404);
    expect((await wrongKey(proxied, a)).status).toBe(401);
    expectWire429(await wrongKey(proxied, a));
    expectWire429(await report(proxied, shop.merchantId, shop.merchantKey, a));
    // Another client of the same proxy is not affected.
    expect((await wrongKey(proxied, b)).status).toBe(401);
    expect((await report(proxied, shop.merchantId, shop.merchantKey, b)).status).toBe(404);
    // Unknown merchant ids count as failures just the same.
    const c = '203.0.113.12';
    for (let i = 0; i < LIMIT; i++) expect((await report(proxied, String(1_000_000_000 + i), 'x', c)).status).toBe(401);
    expectWire429(await report(proxied, '1000000999', 'x', c));
  });

  it('/console/sign-in: wrong tokens from one address get 429 with Retry-After after the limit', async () => {
    const from = '203.0.113.20';
    const statuses: number[] = [];
    let last: Answer | undefined;
    for (let i = 0; i < LIMIT + 3; i++) {
      const page = await send(`${proxiedConsole.url}/console/sign-in`, { headers: { 'x-forwarded-for': from } });
      last = await send(`${proxiedConsole.url}/console/sign-in`, {
        method: 'POST',
        headers: { 'content-type': FORM, cookie: cookieHeader(page.cookies), 'x-forwarded-for': from },
        body: form({ _csrf: csrfOf(page.text), token: `op_${'x'.repeat(40)}${i}` }),
      });
      statuses.push(last.status);
    }
    expect(statuses).toEqual([...times(LIMIT, () => 401), 429, 429, 429]);
    expect(last!.headers.get('retry-after')).toMatch(/^[1-9]\d*$/);
    expect(last!.headers.get('content-type')).toMatch(/^text\/html/);
    expect(last!.text).toContain('Too many failed sign-ins');
  });

  it('/admin: wrong Bearer tokens from one address get 429 with Retry-After after the limit', async () => {
    const from = '203.0.113.30';
    const statuses: number[] = [];
    let last: Answer | undefined;
    for (let i = 0; i < LIMIT + 3; i++) {
      last = await send(`${proxiedConsole.url}/admin/deliveries`, {
        headers: { authorization: `Bearer op_${'y'.repeat(40)}${i}`, 'x-forwarded-for': from },
      });
      statuses.push(last.status);
    }
    expect(statuses).toEqual([...times(LIMIT, () => 401), 429, 429, 429]);
    expect(last!.headers.get('retry-after')).toMatch(/^[1-9]\d*$/);
    expect(jsonOf(last!.text)).toEqual({ status: { code: '429', message: 'Too Many Requests' } });
    // The operator's own token from another address still works.
    const ok = await send(`${proxiedConsole.url}/admin/deliveries?limit=1`, {
      headers: { authorization: `Bearer ${process.env.GATEWAY_OPERATOR_TOKEN}`, 'x-forwarded-for': '203.0.113.31' },
    });
    expect(ok.status).toBe(200);
  });

  it('/portal: forged links from one address get 429 with Retry-After after the limit', async () => {
    const from = '203.0.113.40';
    const statuses: number[] = [];
    let last: Answer | undefined;
    for (let i = 0; i < LIMIT + 3; i++) {
      last = await send(`${proxiedConsole.url}/portal/enter?t=forged${i}.x`, { headers: { 'x-forwarded-for': from } });
      statuses.push(last.status);
    }
    expect(statuses).toEqual([...times(LIMIT, () => 401), 429, 429, 429]);
    expect(last!.headers.get('retry-after')).toMatch(/^[1-9]\d*$/);
  });

  it('unknown addresses are recorded in aggregate: one audit row per blocked address and window, none per failure', async () => {
    const rows = (
      await db.query(
        `SELECT action, target, origin, outcome, detail FROM audit_events WHERE action = 'auth:blocked' AND origin = ANY($1) ORDER BY id`,
        [['http 203.0.113.20', 'http 203.0.113.30', 'http 203.0.113.40']],
      )
    ).rows as { target: string; origin: string; outcome: string; detail: Record<string, unknown> }[];
    expect(rows.map((r) => `${r.origin} ${r.target} ${r.outcome}`).sort()).toEqual([
      'http 203.0.113.20 console refused',
      'http 203.0.113.30 admin refused',
      'http 203.0.113.40 portal refused',
    ]);
    expect(rows[0].detail).toMatchObject({ failures: LIMIT, windowS: 60 });
    const metrics = await (await fetch(`${proxiedConsole.url}/metrics`)).text();
    const metric = (name: string, surface: string) =>
      Number(new RegExp(`^${name}\\{[^}]*surface="${surface}"[^}]*\\} (\\d+)`, 'm').exec(metrics)?.[1]);
    // Every failed sign-in is counted (the one past the limit too); the requests refused before any check are not.
    expect(metric('auth_failures_total', 'console')).toBe(LIMIT + 1);
    expect(metric('auth_blocked_total', 'admin')).toBe(1);
  });

  describe('the portal, per link', () => {
    let link: { id: string; url: string };

    /** Opens the link as a browser does: the session cookie and the CSRF cookie of the entry page. */
    const open = (from: string) => send(link.url, { headers: { 'x-forwarded-for': from } });

    beforeAll(async () => {
      link = await runCli<{ id: string; url: string }>(['merchant:portal-link', '--merchant', shop.merchantId, '--ttl', '1h'], {
        CONSOLE_PUBLIC_URL: proxiedConsole.url,
      });
    });

    it('one CSRF token cannot replay 20 times: past the link replay budget, 429 with Retry-After, nothing done or audited', async () => {
      const ids = times(20, () => randomUUID());
      for (const [i, id] of ids.entries())
        await db
          .query(
            `INSERT INTO deliveries (id, merchant_id, transaction_id, status_version, event, url, body, status, attempts)
           VALUES ($1, $2, $3, 1, 'transaction.status_changed', 'http://127.0.0.1:9/hook', '{}', 'failed', 10)`,
            [id, shop.internalId, randomUUID()],
          )
          .then(() => i);
      const from = '203.0.113.50';
      const entered = await open(from);
      expect(entered.status).toBe(200);
      const page = await send(`${proxiedConsole.url}/portal/deliveries/${ids[0]}`, {
        headers: { cookie: cookieHeader(entered.cookies), 'x-forwarded-for': from },
      });
      expect(page.status).toBe(200);
      const cookie = cookieHeader(entered.cookies, page.cookies);
      const token = csrfOf(page.text);
      expect(token).not.toBe('');
      const statuses: number[] = [];
      let last: Answer | undefined;
      for (const id of ids) {
        last = await send(`${proxiedConsole.url}/portal/deliveries/${id}/replay`, {
          method: 'POST',
          headers: { 'content-type': FORM, cookie, 'x-forwarded-for': from },
          body: form({ _csrf: token }),
        });
        statuses.push(last.status);
      }
      expect(statuses).toEqual([...times(PORTAL_REPLAYS, () => 303), ...times(20 - PORTAL_REPLAYS, () => 429)]);
      expect(last!.headers.get('retry-after')).toMatch(/^[1-9]\d*$/);
      const replayed = (await db.query(`SELECT count(*)::int AS n FROM deliveries WHERE id = ANY($1) AND replays > 0`, [ids])).rows[0].n;
      expect(replayed).toBe(PORTAL_REPLAYS);
      const audited = (
        await db.query(`SELECT count(*)::int AS n FROM audit_events WHERE action = 'webhooks:replay' AND target = ANY($1)`, [ids])
      ).rows[0].n;
      expect(audited).toBe(2 * PORTAL_REPLAYS);
    });

    it('opening one link 30 times: opens past the link budget get 429, and the trail holds one open per window, not one per open', async () => {
      const before = (await db.query(`SELECT coalesce(max(id), 0)::text AS id FROM audit_events`)).rows[0].id;
      const statuses: number[] = [];
      for (let i = 0; i < 30; i++) statuses.push((await open(`203.0.113.${60 + (i % 5)}`)).status);
      // One open was spent by the replay test above, in the same window (or a new window started since).
      expect(statuses.filter((s) => s === 200).length).toBeLessThanOrEqual(PORTAL_OPENS);
      expect(statuses.filter((s) => s === 200).length).toBeGreaterThanOrEqual(PORTAL_OPENS - 1);
      expect(statuses.filter((s) => s !== 200).every((s) => s === 429)).toBe(true);
      const rows = (
        await db.query(`SELECT outcome FROM audit_events WHERE id > $1 AND action = 'portal:enter' AND operator_name = $2`, [
          before,
          `portal:${link.id}`,
        ])
      ).rows;
      expect(rows.length).toBeLessThanOrEqual(2);
    });
  });

  it('Redis down: failures are counted in process (fail open, still limited), never a 5xx', async () => {
    const redis: PrivateServer = await startPrivateRedis();
    const api = await startApp('api', { ...DEFAULTS, REDIS_URL: redis.url, REDIS_CLUSTER_NODES: '' }, { label: 'api-auth-redis-down' });
    try {
      await redis.stop();
      await sleep(500);
      const answers: HttpResult[] = [];
      for (let i = 0; i < LIMIT + 5; i++) answers.push(await wrongKey(api));
      expect(answers.slice(0, LIMIT).map((a) => a.status)).toEqual(times(LIMIT, () => 401));
      for (const a of answers.slice(LIMIT)) expectWire429(a);
    } finally {
      await api.stop();
      await redis.destroy();
    }
  });
});
