import { randomBytes } from 'node:crypto';
import { Page } from 'playwright-core';
import { auditReader, ConsoleSuite, csrfOf, redirectedBack, shot, startConsoleSuite, stopConsoleSuite } from '../support/console-browser';
import { receiverOf, saleBody } from '../support/money';
import { createMerchant, eventually } from '../support/stack';

jest.setTimeout(300_000);

interface DeliveryRow {
  id: string;
  transaction_id: string;
  status: string;
}

/**
 * The console's Listeners page in a real browser: an operator disables a listener, its new
 * deliveries (and a replay) are held and shown held, enabling it releases them and the listener
 * receives them in creation order, and they end succeeded; every disable and enable is in the
 * audit trail as the CLI's are; a viewer sees no buttons and its forged POST is refused with 403.
 */
describe('the Listeners page of the console', () => {
  let s: ConsoleSuite;
  const suffix = randomBytes(3).toString('hex');

  const origin = () => `http://127.0.0.1:${s.listener.port}`;
  const rowOf = (page: Page) => page.locator(`tr[data-listener="${s.shop.merchantId} ${origin()}"]`);
  const deliveryOf = async (transactionId: string): Promise<DeliveryRow> => {
    const rows = (
      await s.db.query('SELECT id, transaction_id, status FROM deliveries WHERE transaction_id = $1', [transactionId.toLowerCase()])
    ).rows;
    expect(rows).toHaveLength(1);
    return rows[0];
  };
  const sale = async (): Promise<string> => {
    const res = await receiverOf(s.stack.baseUrl, s.shop)('sale', saleBody(5_000, s.listener.url('/hook')));
    expect(res.status).toBe(200);
    return res.json.transactionId as string;
  };
  const audit = () => auditReader(s.db);
  const signedIn = (token: string) => s.browser.signedIn(s.stack.consoleUrl, token, { width: 1400, height: 700 });
  const listenersPage = (page: Page) => page.goto(`${s.stack.consoleUrl}/console/listeners?merchant=${s.shop.merchantId}`);

  beforeAll(async () => {
    s = await startConsoleSuite('cl', suffix, {
      // One attempt at a time: released deliveries reach the listener in the order they were queued.
      WEBHOOK_CONCURRENCY: '1',
    });
  });

  afterAll(() => stopConsoleSuite(s ?? {}));

  it('an operator disables a listener, its deliveries are held, enabling it releases them in creation order; both are audited', async () => {
    const from = await audit().lastEventId();
    // A first delivery, succeeded: the listener has a row (its health) and a success rate.
    const first = await sale();
    await eventually(async () => expect((await deliveryOf(first)).status).toBe('succeeded'), { timeoutMs: 30_000 });
    const page = await signedIn(s.tokens.operator);
    const problems: string[] = [];
    page.on('pageerror', (e) => problems.push(e.message));
    await eventually(
      async () => {
        await listenersPage(page);
        expect(await rowOf(page).locator('.rate-1h').textContent()).toContain('100% of 1');
      },
      { timeoutMs: 15_000, intervalMs: 500 },
    );
    expect(await rowOf(page).locator('.listener-state').textContent()).toContain('enabled');
    expect(await rowOf(page).locator('.rate-24h').textContent()).toContain('100% of 1');

    await Promise.all([redirectedBack(page, '/console/listeners'), rowOf(page).locator('button.disable').click()]);
    expect(await page.textContent('#notice')).toContain('Listener disabled');
    expect(await rowOf(page).locator('.listener-state').textContent()).toMatch(new RegExp(`disabled[\\s\\S]*by cl-operator-${suffix}`));

    // New deliveries to it are held, not attempted.
    const heard = s.listener.at('/hook').length;
    const later = [await sale(), await sale(), await sale()];
    for (const id of later) await eventually(async () => expect((await deliveryOf(id)).status).toBe('held'), { timeoutMs: 30_000 });

    // A replay of a delivery to it is held too, and the console says so (made failed directly: a failed delivery takes long to make).
    const replayed = await deliveryOf(first);
    await s.db.query(`UPDATE deliveries SET status = 'failed' WHERE id = $1`, [replayed.id]);
    await page.goto(`${s.stack.consoleUrl}/console/deliveries/${replayed.id}`);
    await Promise.all([redirectedBack(page, `/console/deliveries/${replayed.id}`), page.click('#replay')]);
    expect(await page.textContent('#notice')).toContain('held, not attempted, until the listener is enabled');
    await eventually(async () => expect((await deliveryOf(first)).status).toBe('held'), { timeoutMs: 30_000 });
    expect(s.listener.at('/hook').length).toBe(heard);

    await listenersPage(page);
    expect(await rowOf(page).locator('.held').textContent()).toBe('4');
    await page.goto(`${s.stack.consoleUrl}/console/deliveries?merchant=${s.shop.merchantId}&state=held`);
    expect(await page.locator('#deliveries tbody tr').count()).toBe(4);
    await listenersPage(page);
    await shot(page, 'listeners');

    // Released in (created_at, id) order: the order the notifier created them in. That need not be
    // the order of the three sales: their events can reach the notifier in one batch, taken at once.
    const heldOrder: string[] = (
      await s.db.query(`SELECT transaction_id FROM deliveries WHERE merchant_id = $1 AND status = 'held' ORDER BY created_at, id`, [
        s.shop.internalId,
      ])
    ).rows.map((r) => r.transaction_id);
    expect([...heldOrder].sort()).toEqual([first, ...later].map((id) => id.toLowerCase()).sort());
    expect(heldOrder[0]).toBe(first.toLowerCase());

    await Promise.all([redirectedBack(page, '/console/listeners'), rowOf(page).locator('button.enable').click()]);
    expect(await page.textContent('#notice')).toContain('4 held deliveries released, oldest first');
    expect(await rowOf(page).locator('.listener-state').textContent()).toContain('enabled');
    const order = await s.listener.transactionsAfter('/hook', heard, 4);
    expect(order).toEqual(heldOrder);

    // The deliveries page shows them succeeded.
    const ids: string[] = [];
    for (const t of [first, ...later]) ids.push((await deliveryOf(t)).id);
    await eventually(
      async () => {
        await page.goto(`${s.stack.consoleUrl}/console/deliveries?merchant=${s.shop.merchantId}&host=127.0.0.1`);
        for (const id of ids) expect(await page.locator(`tr[data-delivery="${id}"]`).textContent()).toContain('succeeded');
      },
      { timeoutMs: 30_000, intervalMs: 500 },
    );
    await listenersPage(page);
    expect(await rowOf(page).locator('.held').textContent()).toBe('0');

    // Bad input names the field, and changes nothing.
    const csrf = (await csrfOf(page)) ?? '';
    const bad = await page.request.post(`${s.stack.consoleUrl}/console/listeners/disable`, {
      form: { _csrf: csrf, merchant: s.shop.merchantId, origin: 'ftp://nope' },
      maxRedirects: 0,
    });
    expect(bad.status()).toBe(400);
    expect(await bad.text()).toContain('origin: not an http(s) origin');

    // Audited as the CLI's are: same action, target (the merchant as given) and detail (merchant, origin), plus the console's way in.
    const who = `cl-operator-${suffix}`;
    for (const action of ['listener:disable', 'listener:enable']) {
      const events = await audit().eventsAfter(from, action);
      expect(events.map((e) => [e.operator_name, e.outcome, e.target])).toEqual([
        [who, 'attempted', s.shop.merchantId],
        [who, 'ok', s.shop.merchantId],
      ]);
      expect(events[1].detail).toMatchObject({ merchant: s.shop.merchantId, origin: origin(), via: 'console' });
    }
    expect(problems).toEqual([]);
  });

  it('a viewer sees the listeners without the buttons, and the server refuses its forged POST with 403 (audited)', async () => {
    const from = await audit().lastEventId();
    const page = await signedIn(s.tokens.viewer);
    await listenersPage(page);
    expect(await rowOf(page).count()).toBe(1);
    expect(await page.locator('#listeners button').count()).toBe(0);
    expect(await page.textContent('main')).toContain('needs the operator role');
    // The button is hidden, but that is not the protection: the POST itself, with a valid CSRF token, is refused.
    const res = await page.request.post(`${s.stack.consoleUrl}/console/listeners/disable`, {
      form: { _csrf: (await csrfOf(page)) ?? '', merchant: s.shop.merchantId, origin: origin() },
      maxRedirects: 0,
    });
    expect(res.status()).toBe(403);
    expect(await res.text()).toContain('needs the operator role');
    const row = (await s.db.query('SELECT state FROM listeners WHERE merchant_id = $1 AND origin = $2', [s.shop.internalId, origin()]))
      .rows[0];
    expect(row.state).toBe('enabled');
    const refused = await audit().eventsAfter(from, 'listener:disable');
    expect(refused.map((e) => [e.operator_name, e.outcome, e.target])).toEqual([[`cl-viewer-${suffix}`, 'refused', s.shop.merchantId]]);
  });

  it('pages through many listeners by keyset, worst first, each exactly once', async () => {
    const many = await createMerchant('console listeners paging shop');
    // 60 listeners (more than a page of 50), made directly: every 7th disabled, failures with many ties.
    await s.db.query(
      `INSERT INTO listeners (merchant_id, origin, state, disabled_at, disabled_by, consecutive_failures)
       SELECT $1, 'https://h' || i || '.example:443', CASE WHEN i % 7 = 0 THEN 'disabled' ELSE 'enabled' END,
         CASE WHEN i % 7 = 0 THEN now() END, CASE WHEN i % 7 = 0 THEN 'auto' END, i % 5
       FROM generate_series(0, 59) AS i`,
      [many.internalId],
    );
    const page = await signedIn(s.tokens.viewer);
    await page.goto(`${s.stack.consoleUrl}/console/listeners?merchant=${many.merchantId}`);
    const seen: string[] = [];
    for (let pages = 1; ; pages++) {
      seen.push(
        ...(await page.locator('#listeners tbody tr').evaluateAll((rows) => rows.map((r) => r.getAttribute('data-listener') ?? ''))),
      );
      expect(await page.locator('#listeners tbody tr .rate-24h').first().textContent()).toBe('—');
      if ((await page.locator('#next-page').count()) === 0) {
        expect(pages).toBe(2);
        break;
      }
      await Promise.all([page.waitForURL(/after=/), page.click('#next-page')]);
    }
    const expected: string[] = (
      await s.db.query(
        `SELECT origin FROM listeners WHERE merchant_id = $1 ORDER BY state = 'enabled', consecutive_failures DESC, merchant_id, origin`,
        [many.internalId],
      )
    ).rows.map((r) => `${many.merchantId} ${r.origin}`);
    expect(seen).toHaveLength(60);
    expect(seen).toEqual(expected);
    // Disabled first (0, 7, 14, … 56: nine of them).
    expect(new Set(seen.slice(0, 9))).toEqual(
      new Set([0, 7, 14, 21, 28, 35, 42, 49, 56].map((i) => `${many.merchantId} https://h${i}.example:443`)),
    );

    // A forged page link is a 400 naming the problem, never a 5xx.
    const forged = Buffer.from(JSON.stringify([2, -1, 'x', 'y'])).toString('base64url');
    for (const query of [`after=${forged}`, 'after=%%%', 'state=nope', 'merchant=123']) {
      const res = await page.request.get(`${s.stack.consoleUrl}/console/listeners?${query}`);
      expect(res.status()).toBe(400);
    }
    // A notice comes from the POST that did something (a flash), never from the address.
    for (const query of ['done=__proto__', 'done=constructor', 'done=enabled&released=-1', 'done=enabled&released=1e99']) {
      const res = await page.request.get(`${s.stack.consoleUrl}/console/listeners?merchant=${many.merchantId}&${query}`);
      expect(res.status()).toBe(200);
      expect(await res.text()).not.toContain('id="notice"');
    }
  });
});
