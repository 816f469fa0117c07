import { randomBytes } from 'node:crypto';
import { Client } from 'pg';
import { Page } from 'playwright-core';
import { ConsoleBrowser, startConsoleSuite, stopConsoleSuite } from '../support/console-browser';
import { insertDeliveries, LOCAL_LISTENER_ENV } from '../support/deliveries';
import { Listener } from '../support/listener';
import { createMerchant, eventually, MerchantCredentials, Stack } from '../support/stack';

jest.setTimeout(300_000);

/**
 * The console's Recover page in a real browser: an operator names a merchant, a listener (by its
 * host) and a time, sees the count before anything is replayed, starts the recovery, watches its
 * progress reach the end, and the listener receives every delivery; the start is audited with
 * the merchant, listener, time and count. A viewer's Start is refused by the server (403).
 */
describe('the Recover page in a browser', () => {
  let stack: Stack;
  let shop: MerchantCredentials;
  let listener: Listener;
  let browser: ConsoleBrowser;
  let db: Client;
  const suffix = randomBytes(3).toString('hex');
  let tokens = { viewer: '', operator: '' };
  const origin = () => `http://127.0.0.1:${listener.port}`;

  /** `n` failed deliveries of a merchant (the shop unless said) to `path`, created a minute ago. */
  const failed = (path: string, n: number, merchant = shop) =>
    insertDeliveries(db, { merchantId: merchant.internalId, url: `${origin()}${path}`, origin: origin(), n });
  const statusesOf = async (ids: string[]) =>
    (await db.query(`SELECT status, replays FROM deliveries WHERE id = ANY ($1::uuid[])`, [ids])).rows as {
      status: string;
      replays: number;
    }[];

  const signedIn = (token: string) => browser.signedIn(stack.consoleUrl, token);

  /** Fills the form (the listener by its host, since ten minutes ago as UTC datetime-local) and asks for the count. */
  async function countOn(page: Page, merchant = shop): Promise<void> {
    await page.goto(`${stack.consoleUrl}/console/recover`);
    await page.fill('input[name=merchant]', merchant.merchantId);
    await page.fill('input[name=origin]', `127.0.0.1:${listener.port}`);
    await page.fill('input[name=since]', new Date(Date.now() - 10 * 60_000).toISOString().slice(0, 16));
    await Promise.all([page.waitForURL(/\/console\/recover\/preview\?/), page.click('#count')]);
  }

  const shot = (page: Page, name: string) => browser.shot(page, name);

  beforeAll(async () => {
    ({ stack, db, listener, browser, shop, tokens } = await startConsoleSuite('recover', suffix, {
      ...LOCAL_LISTENER_ENV,
      RECOVERY_PAGE_SIZE: '10',
      // 300 deliveries take 30 steps of a second: the Cancel test acts on a recovery still running.
      RECOVERY_PAUSE_MS: '1000',
    }));
    // The listener as the notifier would have recorded it: the form may name it by its host.
    await db.query(`INSERT INTO listeners (merchant_id, origin) VALUES ($1, $2)`, [shop.internalId, origin()]);
  });

  afterAll(() => stopConsoleSuite({ stack, db, listener, browser }));

  it('recover with the count shown first: nothing replayed before Start, then progress to the end, audited', async () => {
    const ids = await failed('/recover', 60);
    const page = await signedIn(tokens.operator);
    const problems: string[] = [];
    page.on('pageerror', (e) => problems.push(e.message));
    page.on('console', (m) => {
      if (m.type() === 'error') problems.push(m.text());
    });

    await countOn(page);
    expect(await page.textContent('#recover-count')).toMatch(
      new RegExp(`60\\s+failed deliveries of merchant ${shop.merchantId}\\s+to ${origin()}`),
    );
    await shot(page, 'recover');
    // Counted, not replayed: every delivery is as it was.
    await page.waitForTimeout(1_000);
    expect((await statusesOf(ids)).every((d) => d.status === 'failed' && d.replays === 0)).toBe(true);
    expect(listener.at('/recover')).toHaveLength(0);

    await Promise.all([page.waitForURL(/\/console\/recover\/[0-9a-f-]{36}$/), page.click('#start')]);
    const id = page.url().split('/').pop()!;
    expect(await page.getAttribute('meta[http-equiv=refresh]', 'content')).toBe('2');
    expect(await page.textContent('#recovery-progress')).toMatch(/\d+ \/ 60/);
    await shot(page, 'recover-progress');
    await eventually(
      async () => {
        await page.reload();
        expect(await page.textContent('#recovery-state')).toBe('finished');
      },
      { timeoutMs: 60_000, intervalMs: 1_000 },
    );
    expect(await page.textContent('#recovery-progress')).toBe('60 / 60');
    expect(await page.locator('meta[http-equiv=refresh]').count()).toBe(0);
    const progress = await page.request.get(`${stack.consoleUrl}/console/recover/${id}/progress`);
    expect(await progress.json()).toMatchObject({ id, state: 'finished', total: 60, replayed: 60, skipped: 0 });
    await eventually(() => expect(new Set(listener.at('/recover').map((r) => String(r.headers['webhook-id'])))).toEqual(new Set(ids)), {
      timeoutMs: 30_000,
    });

    await page.goto(`${stack.consoleUrl}/console/recover`);
    expect(await page.textContent(`tr[data-recovery="${id}"]`)).toMatch(/finished[\s\S]*60 \/ 60/);
    const events = (
      await db.query(`SELECT operator_name, target, outcome, detail FROM audit_events WHERE action = 'webhooks:recover' ORDER BY id`)
    ).rows;
    expect(events.map((e) => [e.operator_name, e.outcome])).toEqual([
      [`recover-operator-${suffix}`, 'attempted'],
      [`recover-operator-${suffix}`, 'ok'],
    ]);
    expect(events[1].target).toBe(id);
    expect(events[1].detail).toMatchObject({ merchant: shop.merchantId, origin: origin(), count: 60, recovery: id, via: 'console' });
    expect(events[1].detail.since).toMatch(/^\d{4}-\d{2}-\d{2}T/);
    expect(problems).toEqual([]);
  });

  it("a viewer sees the count but the server refuses the viewer's Start with 403, and nothing is replayed", async () => {
    const ids = await failed('/recover-viewer', 5);
    const page = await signedIn(tokens.viewer);
    await countOn(page);
    expect(await page.textContent('#recover-count')).toMatch(/5\s+failed deliveries/);
    const before = (await db.query(`SELECT count(*)::int AS n FROM recoveries`)).rows[0].n;
    const [answer] = await Promise.all([page.waitForResponse((r) => r.request().method() === 'POST'), page.click('#start')]);
    expect(answer.status()).toBe(403);
    expect(await page.textContent('[role=alert]')).toContain('needs the operator role');
    expect((await db.query(`SELECT count(*)::int AS n FROM recoveries`)).rows[0].n).toBe(before);
    expect((await statusesOf(ids)).every((d) => d.status === 'failed' && d.replays === 0)).toBe(true);
    const refused = await db.query(`SELECT outcome FROM audit_events WHERE action = 'webhooks:recover' AND operator_name = $1`, [
      `recover-viewer-${suffix}`,
    ]);
    expect(refused.rows.map((r) => r.outcome)).toEqual(['refused']);
  });

  it('Cancel stops a running recovery from its page (operator only, audited); a viewer is refused with 403', async () => {
    // A merchant of its own: the other tests leave failed deliveries to the same listener.
    const calm = await createMerchant('recover cancel shop');
    await db.query(`INSERT INTO listeners (merchant_id, origin) VALUES ($1, $2)`, [calm.internalId, origin()]);
    const ids = await failed('/recover-cancel', 300, calm);
    const page = await signedIn(tokens.operator);
    // Signed in before Start: the recovery runs for about 30 s, and everything below fits in it.
    const viewer = await signedIn(tokens.viewer);
    await countOn(page, calm);
    expect(await page.textContent('#recover-count')).toMatch(/300\s+failed deliveries/);
    await Promise.all([page.waitForURL(/\/console\/recover\/[0-9a-f-]{36}$/), page.click('#start')]);
    const id = page.url().split('/').pop()!;

    await viewer.goto(`${stack.consoleUrl}/console/recover/${id}`);
    expect(await viewer.locator('#cancel').count()).toBe(0);
    const csrf = (await viewer.getAttribute('input[name=_csrf]', 'value')) ?? '';
    const refused = await viewer.request.post(`${stack.consoleUrl}/console/recover/${id}/cancel`, {
      form: { _csrf: csrf },
      maxRedirects: 0,
    });
    expect(refused.status()).toBe(403);
    expect((await db.query(`SELECT state FROM recoveries WHERE id = $1`, [id])).rows[0].state).toBe('running');

    await Promise.all([page.waitForURL(new RegExp(`/console/recover/${id}$`)), page.click('#cancel')]);
    expect(await page.textContent('#recovery-state')).toBe('cancelled');
    expect(await page.locator('meta[http-equiv=refresh]').count()).toBe(0);
    const r = (await db.query(`SELECT replayed, skipped FROM recoveries WHERE id = $1`, [id])).rows[0];
    expect(r.replayed).toBeLessThan(300);
    expect(r.replayed + r.skipped).toBe(300);
    await page.waitForTimeout(1_000);
    const after = await statusesOf(ids);
    expect(after.filter((d) => d.replays === 1)).toHaveLength(r.replayed);
    expect(after.filter((d) => d.status === 'failed' && d.replays === 0)).toHaveLength(300 - r.replayed);
    const events = (
      await db.query(
        `SELECT operator_name, outcome FROM audit_events WHERE action = 'webhooks:recover-cancel' AND target = $1 ORDER BY id`,
        [id],
      )
    ).rows.map((e) => [e.operator_name, e.outcome]);
    expect(events).toEqual([
      [`recover-viewer-${suffix}`, 'refused'],
      [`recover-operator-${suffix}`, 'attempted'],
      [`recover-operator-${suffix}`, 'ok'],
    ]);
  });

  it('a bad merchant, time or listener answers 400 naming the field, never 5xx', async () => {
    const page = await signedIn(tokens.operator);
    const since = '2026-01-01T00:00';
    for (const [query, field] of [
      [`merchant=0000000000&since=${since}`, 'Merchant id'],
      [`merchant=${shop.merchantId}&since=yesterday`, 'Since'],
      [`merchant=${shop.merchantId}&since=-271821-04-20T00:00`, 'Since'],
      [`merchant=${shop.merchantId}&since=${since}&origin=nowhere.example`, 'Listener'],
      [`merchant=${shop.merchantId}&since=${since}&origin=ftp://x`, 'Listener'],
    ]) {
      const res = await page.goto(`${stack.consoleUrl}/console/recover/preview?${query}`);
      expect(res?.status()).toBe(400);
      expect(await page.textContent('[role=alert]')).toContain(field);
    }
    expect((await page.request.get(`${stack.consoleUrl}/console/recover/not-a-uuid`)).status()).toBe(404);
    expect((await page.request.get(`${stack.consoleUrl}/console/recover/00000000-0000-4000-8000-000000000000/progress`)).status()).toBe(
      404,
    );
  });
});
