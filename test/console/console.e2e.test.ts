import { randomBytes } from 'node:crypto';
import { join } from 'node:path';
import { Queue } from 'bullmq';
import { queueOn } from '@app/messaging';
import { testRedis } from '../support/redis';
import type { Client } from 'pg';
import type { Browser, Page } from 'playwright-core';
import { Patterns } from '@app/contracts';
import { DELIVERY_QUEUE } from '@app/webhooks/delivery';
import { SANDBOX_CARDS } from '../fixtures/cards';
import type { Listener } from '../support/listener';
import { failedDelivery as failedOf, pageSuite, SHOTS } from '../support/pages';
import { redirectedBack } from '../support/console-browser';
import { createMerchant, eventually, MerchantCredentials, runCli, Stack } from '../support/stack';

jest.setTimeout(300_000);

/**
 * The failed-callback console in a real browser (Chromium driven by playwright-core): sign-in with
 * an operator token, the overview, the deliveries list, a delivery's attempts and its replay, a
 * viewer refused by the server, a wrong token refused, a POST without its CSRF token refused, a
 * copied session cookie refused after sign-out and after operator:revoke, the sign-in form's CSRF
 * cookie and token worth nothing once signed in, and bull-board opened with the console's session under its CSP, failures redacted.
 */
describe('the operator console in a browser', () => {
  let stack: Stack;
  let shop: MerchantCredentials;
  let listener: Listener;
  let browser: Browser;
  let db: Client;
  const suffix = randomBytes(3).toString('hex');
  const tokens = { viewer: '', operator: '' };
  const suite = pageSuite();
  const contexts = suite.contexts;

  /** A sale whose deliveries go to `path` on the listener, once all of them have failed. */
  const failedDelivery = (path: string) => failedOf({ stack, db, listener }, shop, path);

  async function signedIn(token: string): Promise<Page> {
    const context = await browser.newContext({ viewport: { width: 1280, height: 900 } });
    contexts.push(context);
    const page = await context.newPage();
    await page.goto(`${stack.consoleUrl}/console/sign-in`);
    await page.fill('#token', token);
    await Promise.all([page.waitForURL(/\/console\/overview$/), page.click('button[type=submit]')]);
    return page;
  }

  const shot = (page: Page, name: string) => page.screenshot({ path: join(SHOTS, `${name}.png`), fullPage: true });
  const csrfOf = (page: Page) => page.getAttribute('input[name=_csrf]', 'value');

  beforeAll(async () => {
    ({ stack, db, listener, browser } = suite);
    shop = await createMerchant('console shop');
    for (const role of ['viewer', 'operator'] as const) {
      tokens[role] = (await runCli<{ token: string }>(['operator:create', '--name', `console-${role}-${suffix}`, '--role', role])).token;
    }
  });

  it('an operator finds a failed delivery, reads its attempts, replays it and sees it succeed; the replay is audited', async () => {
    let up = false;
    listener.on('/console-down', () => ({ status: up ? 200 : 500, headers: { 'content-type': 'text/plain' } }));
    const d = await failedDelivery('/console-down');
    const page = await signedIn(tokens.operator);
    const problems: string[] = [];
    page.on('console', (m) => {
      if (m.type() === 'error') problems.push(m.text());
    });
    page.on('pageerror', (e) => problems.push(e.message));

    const overview = await page.goto(`${stack.consoleUrl}/console/overview`);
    expect(overview?.headers()['content-security-policy']).toContain("script-src 'self'");
    await page.waitForSelector('#per-minute canvas');
    expect(await page.textContent('#failing')).toContain('127.0.0.1');
    await shot(page, 'overview');

    await page.goto(`${stack.consoleUrl}/console/deliveries?merchant=${shop.merchantId}&state=failed`);
    const row = page.locator(`tr[data-delivery="${d.id}"]`);
    expect(await row.textContent()).toMatch(/failed[\s\S]*10[\s\S]*http_status \(500\)/);
    await shot(page, 'deliveries');

    await Promise.all([page.waitForURL(new RegExp(`/console/deliveries/${d.id}$`)), row.locator('a').click()]);
    const attempts = page.locator('#attempts tbody tr');
    expect(await attempts.count()).toBe(10);
    expect(await attempts.first().textContent()).toMatch(/500[\s\S]*http_status/);
    // Each attempt links to its trace in the operator's store (TRACE_URL_TEMPLATE).
    const [, traceId] =
      /^https:\/\/traces\.example\/trace\/([0-9a-f]{32})$/.exec(
        (await attempts.first().locator('td.trace a').getAttribute('href')) ?? '',
      ) ?? [];
    expect(traceId).toBeDefined();
    // Every attempt, the retries too, is a span of the status change's trace.
    expect(await attempts.locator('td.trace a').allTextContents()).toEqual(Array.from({ length: 10 }, () => traceId));
    const text = (await page.content()).replace(/\s+/g, '');
    expect(text).not.toContain(SANDBOX_CARDS[1]);
    expect(await page.textContent('#body')).toContain('"');
    await shot(page, 'delivery');

    up = true;
    const lastEvent: string = (await db.query(`SELECT coalesce(max(id), 0)::text AS id FROM audit_events`)).rows[0].id;
    // Back on the same page, its notice from the POST's flash.
    await Promise.all([redirectedBack(page, `/console/deliveries/${d.id}`), page.click('#replay')]);
    expect(await page.textContent('#notice')).toContain('Replay queued');
    await eventually(() => expect(listener.at('/console-down').length).toBeGreaterThanOrEqual(11), { timeoutMs: 30_000 });
    await eventually(
      async () => {
        await page.goto(`${stack.consoleUrl}/console/deliveries/${d.id}`);
        expect(await page.textContent('#delivery-state')).toContain('succeeded');
      },
      { timeoutMs: 30_000, intervalMs: 500 },
    );
    await shot(page, 'delivery-succeeded');
    const events = (
      await db.query(
        `SELECT operator_name, action, target, outcome, detail FROM audit_events WHERE id > $1 AND action = 'webhooks:replay' ORDER BY id`,
        [lastEvent],
      )
    ).rows;
    expect(events.map((e) => [e.operator_name, e.target, e.outcome, e.detail.via])).toEqual([
      [`console-operator-${suffix}`, d.id, 'attempted', 'console'],
      [`console-operator-${suffix}`, d.id, 'ok', 'console'],
    ]);
    expect(problems).toEqual([]);
  });

  it('a viewer sees a failed delivery but the server refuses its replay with 403', async () => {
    listener.on('/console-gone', () => ({ status: 410 }));
    const d = await failedDelivery('/console-gone');
    const page = await signedIn(tokens.viewer);
    await page.goto(`${stack.consoleUrl}/console/deliveries/${d.id}`);
    expect(await page.locator('#replay').count()).toBe(0);
    expect(await page.textContent('main')).toContain('needs the operator role');
    // The button is hidden, but that is not the protection: the POST itself, with a valid CSRF token, is refused.
    const res = await page.request.post(`${stack.consoleUrl}/console/deliveries/${d.id}/replay`, {
      form: { _csrf: (await csrfOf(page)) ?? '' },
      maxRedirects: 0,
    });
    expect(res.status()).toBe(403);
    expect((await db.query('SELECT status FROM deliveries WHERE id = $1', [d.id])).rows[0].status).toBe('failed');
    const refused = await db.query(
      `SELECT outcome FROM audit_events WHERE action = 'webhooks:replay' AND target = $1 AND operator_name = $2`,
      [d.id, `console-viewer-${suffix}`],
    );
    expect(refused.rows.map((r) => r.outcome)).toEqual(['refused']);
  });

  it('a wrong token cannot sign in, and a page without a session sends the browser to sign-in', async () => {
    const context = await browser.newContext();
    contexts.push(context);
    const page = await context.newPage();
    await page.goto(`${stack.consoleUrl}/console/overview`);
    expect(page.url()).toMatch(/\/console\/sign-in$/);
    await shot(page, 'sign-in');
    await page.fill('#token', `op_${randomBytes(32).toString('base64url')}`);
    const [answer] = await Promise.all([page.waitForResponse((r) => r.request().method() === 'POST'), page.click('button[type=submit]')]);
    expect(answer.status()).toBe(401);
    expect(await page.textContent('[role=alert]')).toContain('not an active operator token');
    expect((await context.cookies()).map((c) => c.name)).not.toContain('gw_console');
  });

  it('the session cookie is HttpOnly and SameSite=Strict, and a POST without its CSRF token is refused', async () => {
    listener.on('/console-csrf', () => ({ status: 410 }));
    const d = await failedDelivery('/console-csrf');
    const page = await signedIn(tokens.operator);
    const session = (await page.context().cookies()).find((c) => c.name === 'gw_console');
    expect(session).toMatchObject({ httpOnly: true, sameSite: 'Strict', path: '/' });
    expect(session?.value).not.toContain(tokens.operator);
    const url = `${stack.consoleUrl}/console/deliveries/${d.id}/replay`;
    expect((await page.request.post(url, { form: {}, maxRedirects: 0 })).status()).toBe(403);
    expect((await page.request.post(url, { form: { _csrf: 'forged' }, maxRedirects: 0 })).status()).toBe(403);
    const status = (await db.query('SELECT status FROM deliveries WHERE id = $1', [d.id])).rows[0].status;
    expect(status).toBe('failed');
    // The same session, with the page's own token: allowed.
    await page.goto(`${stack.consoleUrl}/console/deliveries/${d.id}`);
    expect((await page.request.post(url, { form: { _csrf: (await csrfOf(page)) ?? '' }, maxRedirects: 0 })).status()).toBe(303);
  });

  it('bull-board opens in the browser with the console session, under its CSP with no violation, and still with the Bearer token', async () => {
    const page = await signedIn(tokens.viewer);
    const problems: string[] = [];
    page.on('console', (m) => {
      if (m.type() === 'error' || /Content.Security.Policy/i.test(m.text())) problems.push(m.text());
    });
    page.on('pageerror', (e) => problems.push(e.message));
    const thirdParty: string[] = [];
    page.on('request', (r) => {
      if (!r.url().startsWith(stack.consoleUrl)) thirdParty.push(r.url());
    });
    const res = await page.goto(`${stack.consoleUrl}/admin/queues`);
    expect(res?.status()).toBe(200);
    const csp = res?.headers()['content-security-policy'] ?? '';
    expect(csp).toContain("script-src 'self'");
    expect(csp).toContain("frame-ancestors 'none'");
    // bull-board renders its queue list from its API: the deliveries queue shows up once it has.
    await page.getByText(DELIVERY_QUEUE).first().waitFor({ timeout: 30_000 });
    await page.waitForTimeout(1_000);
    await shot(page, 'queues');
    expect(problems).toEqual([]);
    expect(thirdParty).toEqual([]);
    const api = await page.request.get(`${stack.consoleUrl}/admin/queues/api/queues`);
    expect(api.status()).toBe(200);

    const anonymous = await browser.newContext();
    contexts.push(anonymous);
    const stranger = await anonymous.newPage();
    await stranger.goto(`${stack.consoleUrl}/admin/queues`);
    expect(stranger.url()).toMatch(/\/console\/sign-in$/);

    const bearer = await fetch(`${stack.consoleUrl}/admin/queues/api/queues`, { headers: { authorization: `Bearer ${tokens.viewer}` } });
    expect(bearer.status).toBe(200);
  });

  it('the session opens only bull-board under /admin (the JSON beside it answers unmasked bodies), and nothing there is cached', async () => {
    const page = await signedIn(tokens.operator);
    const deliveries = await page.request.get(`${stack.consoleUrl}/admin/deliveries`);
    expect(deliveries.status()).toBe(401);
    const board = await page.request.get(`${stack.consoleUrl}/admin/queues/api/queues`);
    expect(board.status()).toBe(200);
    expect(board.headers()['cache-control']).toBe('no-store');
    const bearer = await fetch(`${stack.consoleUrl}/admin/deliveries`, { headers: { authorization: `Bearer ${tokens.viewer}` } });
    expect(bearer.status).toBe(200);
    expect(bearer.headers.get('cache-control')).toBe('no-store');
  });

  it('bull-board shows failures redacted: the error class on card-bearing queues, card-like numbers masked elsewhere', async () => {
    const redis = testRedis({ maxRetriesPerRequest: null });
    const prefix = process.env.QUEUE_PREFIX!;
    const card = SANDBOX_CARDS[1];
    try {
      const shown = async (queueName: string): Promise<{ failedReason: string; stacktrace: string[] }> => {
        // A job no worker takes (delayed an hour), given a failure as BullMQ records one: a reason and a stack in its hash.
        const queue = new Queue(queueName, queueOn(redis, prefix, queueName));
        const job = await queue.add('probe', {}, { delay: 3_600_000 });
        try {
          await redis.hset(queue.toKey(job.id!), {
            failedReason: `declined ${card} cvv 123`,
            stacktrace: JSON.stringify([`Error: declined ${card} cvv 123\n    at probe (/app/probe.js:1:1)`]),
          });
          const res = await fetch(`${stack.consoleUrl}/admin/queues/api/queues/${encodeURIComponent(queueName)}/${job.id}`, {
            headers: { authorization: `Bearer ${tokens.viewer}` },
          });
          expect(res.status).toBe(200);
          const body = (await res.json()) as { job: { failedReason: string; stacktrace: string[] } };
          expect(JSON.stringify(body)).not.toContain(card);
          return body.job;
        } finally {
          await job.remove();
          await queue.close();
        }
      };
      const cardBearing = await shown(Patterns.CardAuthorize);
      expect(cardBearing.failedReason).toBe('Error (message hidden: card-bearing queue)');
      expect(cardBearing.stacktrace).toEqual(['Error: [message hidden: card-bearing queue]\n    at probe (/app/probe.js:1:1)']);
      const deliveries = await shown(DELIVERY_QUEUE);
      expect(deliveries.failedReason).toMatch(/^declined .+ cvv 123$/);
    } finally {
      redis.disconnect();
    }
  });

  it("signing out ends the session on the server: a copy of its cookie is refused; the sign-in form's CSRF cookie is gone at sign-in", async () => {
    const context = await browser.newContext();
    contexts.push(context);
    const page = await context.newPage();
    const cookie = async (name: string) => (await context.cookies()).find((c) => c.name === name);
    await page.goto(`${stack.consoleUrl}/console/sign-in`);
    const secretBefore = (await cookie('gw_csrf'))?.value;
    expect(secretBefore).toBeTruthy();
    const staleToken = (await csrfOf(page)) ?? '';
    await page.fill('#token', tokens.operator);
    await Promise.all([page.waitForURL(/\/console\/overview$/), page.click('button[type=submit]')]);
    // The session's tokens are bound to it (an HMAC of its id): the pre-session cookie is removed,
    // and a token of the sign-in form (one planted or read then) does not pass.
    expect(await cookie('gw_csrf')).toBeUndefined();
    const stale = await page.request.post(`${stack.consoleUrl}/console/sign-out`, { form: { _csrf: staleToken }, maxRedirects: 0 });
    expect(stale.status()).toBe(403);

    // The session cookie, copied into another browser: it works there while the session is open.
    const session = (await cookie('gw_console'))!;
    const copy = await browser.newContext();
    contexts.push(copy);
    await copy.addCookies([{ name: session.name, value: session.value, url: stack.consoleUrl, httpOnly: true, sameSite: 'Strict' }]);
    const thief = await copy.newPage();
    await thief.goto(`${stack.consoleUrl}/console/overview`);
    expect(thief.url()).toMatch(/\/console\/overview$/);

    await Promise.all([page.waitForURL(/\/console\/sign-in$/), page.click('header form button[type=submit]')]);
    expect(await cookie('gw_console')).toBeUndefined();
    // The sign-in page the browser landed on issued a new pre-session cookie.
    expect((await cookie('gw_csrf'))?.value).not.toBe(secretBefore);

    await thief.goto(`${stack.consoleUrl}/console/overview`);
    expect(thief.url()).toMatch(/\/console\/sign-in$/);
    expect((await copy.request.get(`${stack.consoleUrl}/admin/queues/api/queues`)).status()).toBe(401);
    const rows = await db.query(
      `SELECT s.ended_at FROM console_sessions s JOIN operators o ON o.id = s.operator_id WHERE o.name = $1 ORDER BY s.created_at DESC LIMIT 1`,
      [`console-operator-${suffix}`],
    );
    expect(rows.rows[0].ended_at).toBeInstanceOf(Date);
  });

  it('operator:revoke ends the operator console sessions', async () => {
    const name = `console-revoked-${suffix}`;
    const token = (await runCli<{ token: string }>(['operator:create', '--name', name, '--role', 'viewer'])).token;
    const page = await signedIn(token);
    const open = `SELECT count(*)::int AS n FROM console_sessions s JOIN operators o ON o.id = s.operator_id WHERE o.name = $1 AND s.ended_at IS NULL`;
    expect((await db.query(open, [name])).rows[0].n).toBe(1);
    await runCli(['operator:revoke', '--name', name]);
    expect((await db.query(open, [name])).rows[0].n).toBe(0);
    await page.goto(`${stack.consoleUrl}/console/overview`);
    expect(page.url()).toMatch(/\/console\/sign-in$/);
  });

  it('an expired session is refused, and the retention pass deletes sessions ended or expired over 7 days ago', async () => {
    const name = `console-viewer-${suffix}`;
    const page = await signedIn(tokens.viewer);
    // This browser's session, aged past its 8 hours.
    await db.query(
      `UPDATE console_sessions SET created_at = now() - interval '9 hours', expires_at = now() - interval '1 hour'
       WHERE id_hash = (SELECT s.id_hash FROM console_sessions s JOIN operators o ON o.id = s.operator_id WHERE o.name = $1
                        ORDER BY s.created_at DESC LIMIT 1)`,
      [name],
    );
    await page.goto(`${stack.consoleUrl}/console/overview`);
    expect(page.url()).toMatch(/\/console\/sign-in$/);

    const old = Buffer.alloc(32, 7);
    const recent = Buffer.alloc(32, 8);
    await db.query(
      `INSERT INTO console_sessions (id_hash, operator_id, created_at, expires_at, ended_at)
       SELECT $1::bytea, id, now() - interval '9 days', now() - interval '8 days 16 hours', now() - interval '8 days' FROM operators WHERE name = $3
       UNION ALL SELECT $2::bytea, id, now() - interval '6 days', now() - interval '5 days 16 hours', NULL FROM operators WHERE name = $3`,
      [old, recent, name],
    );
    const pass = await runCli<{ tables: { table: string; rows: number }[] }>(['retention:run', '--table', 'console_sessions']);
    expect(pass.tables[0].table).toBe('console_sessions');
    expect(pass.tables[0].rows).toBeGreaterThanOrEqual(1);
    const left = await db.query(`SELECT id_hash FROM console_sessions WHERE id_hash = ANY($1::bytea[])`, [[old, recent]]);
    expect(left.rows.map((r) => Buffer.from(r.id_hash).equals(recent))).toEqual([true]);
  });

  it('hostile filters, cursors and ids answer 4xx, never 5xx', async () => {
    const page = await signedIn(tokens.operator);
    const badCursor = Buffer.from(JSON.stringify(['2026-99-99 99:99:99+00', '00000000-0000-0000-0000-000000000000'])).toString('base64url');
    for (const query of [`after=${badCursor}`, 'from=-271821-04-20T00:00:00Z', 'to=0000-01-01T00:00', 'state=nope', 'after=%%%']) {
      const res = await page.request.get(`${stack.consoleUrl}/console/deliveries?${query}`);
      expect([200, 400]).toContain(res.status());
    }
    await page.goto(`${stack.consoleUrl}/console/deliveries`);
    const csrf = await csrfOf(page);
    const replay = await page.request.post(`${stack.consoleUrl}/console/deliveries/${'-'.repeat(36)}/replay`, {
      form: { _csrf: csrf ?? '' },
    });
    expect(replay.status()).toBe(404);
  });
});
