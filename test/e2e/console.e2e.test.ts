import { randomBytes } from 'node:crypto';
import { Client } from 'pg';
import { Page } from 'playwright-core';
import { SANDBOX_CARDS } from '../fixtures/cards';
import { ConsoleBrowser, csrfOf, shot, startConsoleSuite, stopConsoleSuite } from '../support/console-browser';
import { Listener } from '../support/listener';
import { receiverOf, saleBody } from '../support/money';
import { eventually, MerchantCredentials, Stack } from '../support/stack';

jest.setTimeout(300_000);

interface DeliveryRow {
  id: string;
  status: string;
  attempts: number;
}

/**
 * The failed-callback console in a real browser (Chromium driven by playwright-core): sign-in with
 * an operator token, the overview, the deliveries list, a delivery's attempts and its replay, a
 * viewer refused by the server, a wrong token refused, a POST without its CSRF token refused, and
 * bull-board opened with the console's session.
 */
describe('the operator console in a browser', () => {
  let stack: Stack;
  let shop: MerchantCredentials;
  let listener: Listener;
  let browser: ConsoleBrowser;
  let db: Client;
  const suffix = randomBytes(3).toString('hex');
  let tokens = { viewer: '', operator: '' };

  const deliveriesOf = async (transactionId: string): Promise<DeliveryRow[]> =>
    (
      await db.query('SELECT id, status, attempts FROM deliveries WHERE transaction_id = $1 ORDER BY created_at, id', [
        transactionId.toLowerCase(),
      ])
    ).rows;

  /** A sale whose deliveries go to `path` on the listener, once all of them have failed. */
  async function failedDelivery(path: string): Promise<DeliveryRow> {
    const res = await receiverOf(stack.baseUrl, shop)('sale', saleBody(5_000, listener.url(path)));
    expect(res.status).toBe(200);
    return eventually(
      async () => {
        const rows = await deliveriesOf(res.json.transactionId);
        expect(rows.length).toBeGreaterThan(0);
        expect(rows.map((r) => r.status)).toEqual(rows.map(() => 'failed'));
        return rows[0];
      },
      { timeoutMs: 120_000, intervalMs: 500 },
    );
  }

  const signedIn = (token: string): Promise<Page> => browser.signedIn(stack.baseUrl, token);

  beforeAll(async () => {
    ({ stack, db, listener, browser, shop, tokens } = await startConsoleSuite('console', suffix, {
      WEBHOOK_SWEEP_INTERVAL_MS: '500',
      WEBHOOK_SWEEP_GRACE_S: '1',
    }));
  });

  afterAll(() => stopConsoleSuite({ stack, db, listener, browser }));

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

    const overview = await page.goto(`${stack.baseUrl}/console/overview`);
    expect(overview?.headers()['content-security-policy']).toContain("script-src 'self'");
    await page.waitForSelector('#per-minute canvas');
    expect(await page.textContent('#failing')).toContain('127.0.0.1');
    await shot(page, 'overview');

    await page.goto(`${stack.baseUrl}/console/deliveries?merchant=${shop.merchantId}&state=failed`);
    const row = page.locator(`tr[data-delivery="${d.id}"]`);
    expect(await row.textContent()).toMatch(/failed[\s\S]*10[\s\S]*http_status \(500\)/);
    await shot(page, 'deliveries');

    await Promise.all([page.waitForURL(new RegExp(`/console/deliveries/${d.id}$`)), row.locator('a').click()]);
    const attempts = page.locator('#attempts tbody tr');
    expect(await attempts.count()).toBe(10);
    expect(await attempts.first().textContent()).toMatch(/500[\s\S]*http_status/);
    const text = (await page.content()).replace(/\s+/g, '');
    expect(text).not.toContain(SANDBOX_CARDS[1]);
    expect(await page.textContent('#body')).toContain('"');
    await shot(page, 'delivery');

    up = true;
    const lastEvent: string = (await db.query(`SELECT coalesce(max(id), 0)::text AS id FROM audit_events`)).rows[0].id;
    await Promise.all([page.waitForURL(/replay=queued$/), page.click('#replay')]);
    expect(await page.textContent('#notice')).toContain('Replay queued');
    await eventually(() => expect(listener.at('/console-down').length).toBeGreaterThanOrEqual(11), { timeoutMs: 30_000 });
    await eventually(
      async () => {
        await page.goto(`${stack.baseUrl}/console/deliveries/${d.id}`);
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
    await page.goto(`${stack.baseUrl}/console/deliveries/${d.id}`);
    expect(await page.locator('#replay').count()).toBe(0);
    expect(await page.textContent('main')).toContain('needs the operator role');
    // The button is hidden, but that is not the protection: the POST itself, with a valid CSRF token, is refused.
    const res = await page.request.post(`${stack.baseUrl}/console/deliveries/${d.id}/replay`, {
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
    const context = await browser.context();
    const page = await context.newPage();
    await page.goto(`${stack.baseUrl}/console/overview`);
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
    const url = `${stack.baseUrl}/console/deliveries/${d.id}/replay`;
    expect((await page.request.post(url, { form: {}, maxRedirects: 0 })).status()).toBe(403);
    expect((await page.request.post(url, { form: { _csrf: 'forged' }, maxRedirects: 0 })).status()).toBe(403);
    const status = (await db.query('SELECT status FROM deliveries WHERE id = $1', [d.id])).rows[0].status;
    expect(status).toBe('failed');
    // The same session, with the page's own token: allowed.
    await page.goto(`${stack.baseUrl}/console/deliveries/${d.id}`);
    expect((await page.request.post(url, { form: { _csrf: (await csrfOf(page)) ?? '' }, maxRedirects: 0 })).status()).toBe(303);
  });

  it('bull-board opens in the browser with the console session, and still with the Bearer token', async () => {
    const page = await signedIn(tokens.viewer);
    const res = await page.goto(`${stack.baseUrl}/admin/queues`);
    expect(res?.status()).toBe(200);
    // bull-board renders its queue list from its API (polled): give it a moment before the picture.
    await page.waitForTimeout(2_000);
    await shot(page, 'queues');
    const api = await page.request.get(`${stack.baseUrl}/admin/queues/api/queues`);
    expect(api.status()).toBe(200);

    const anonymous = await browser.context();
    const stranger = await anonymous.newPage();
    await stranger.goto(`${stack.baseUrl}/admin/queues`);
    expect(stranger.url()).toMatch(/\/console\/sign-in$/);

    const bearer = await fetch(`${stack.baseUrl}/admin/queues/api/queues`, { headers: { authorization: `Bearer ${tokens.viewer}` } });
    expect(bearer.status).toBe(200);
  });

  it('the session opens only bull-board under /admin (the JSON beside it answers unmasked bodies), and nothing there is cached', async () => {
    const page = await signedIn(tokens.operator);
    const deliveries = await page.request.get(`${stack.baseUrl}/admin/deliveries`);
    expect(deliveries.status()).toBe(401);
    const board = await page.request.get(`${stack.baseUrl}/admin/queues/api/queues`);
    expect(board.status()).toBe(200);
    expect(board.headers()['cache-control']).toBe('no-store');
    const bearer = await fetch(`${stack.baseUrl}/admin/deliveries`, { headers: { authorization: `Bearer ${tokens.viewer}` } });
    expect(bearer.status).toBe(200);
    expect(bearer.headers.get('cache-control')).toBe('no-store');
  });

  it('hostile filters, cursors and ids answer 4xx, never 5xx', async () => {
    const page = await signedIn(tokens.operator);
    const badCursor = Buffer.from(JSON.stringify(['2026-99-99 99:99:99+00', '00000000-0000-0000-0000-000000000000'])).toString('base64url');
    for (const query of [`after=${badCursor}`, 'from=-271821-04-20T00:00:00Z', 'to=0000-01-01T00:00', 'state=nope', 'after=%%%']) {
      const res = await page.request.get(`${stack.baseUrl}/console/deliveries?${query}`);
      expect([200, 400]).toContain(res.status());
    }
    await page.goto(`${stack.baseUrl}/console/deliveries`);
    const csrf = await csrfOf(page);
    const replay = await page.request.post(`${stack.baseUrl}/console/deliveries/${'-'.repeat(36)}/replay`, { form: { _csrf: csrf ?? '' } });
    expect(replay.status()).toBe(404);
  });
});
