import { randomUUID } from 'node:crypto';
import { join } from 'node:path';
import type { Client } from 'pg';
import type { Browser, Page } from 'playwright-core';
import { portalKeys, sealPortal } from '@app/webhooks';
import type { Listener } from '../support/listener';
import { failedDelivery as failedOf, pageSuite, SHOTS } from '../support/pages';
import { redirectedBack } from '../support/console-browser';
import { createMerchant, eventually, MerchantCredentials, runCli, runCliRaw, Stack } from '../support/stack';

jest.setTimeout(300_000);

/** A page of another site (a mail, a ticket) the merchant clicks its link from; served by the browser context itself. */
const MAIL = 'http://mail.example/';

interface Link {
  id: string;
  merchantId: string;
  url: string;
  expiresAt: string;
}

/**
 * The merchant portal in a real browser: a link from merchant:portal-link, opened by a click from
 * another site, shows that merchant's deliveries only (list, detail, filters), replays one of them
 * (audited with the link as actor), and stops working once it expires or is revoked; a tampered
 * or forged token is refused.
 */
describe('the merchant portal in a browser', () => {
  let stack: Stack;
  let shopA: MerchantCredentials;
  let shopB: MerchantCredentials;
  let listener: Listener;
  let browser: Browser;
  let db: Client;
  const suite = pageSuite();
  const contexts = suite.contexts;

  const failedDelivery = (shop: MerchantCredentials, path: string) => failedOf({ stack, db, listener }, shop, path);

  const issue = (shop: MerchantCredentials, ttl: string) =>
    runCli<Link>(['merchant:portal-link', '--merchant', shop.merchantId, '--ttl', ttl], { CONSOLE_PUBLIC_URL: stack.consoleUrl });

  async function newPage(): Promise<Page> {
    const context = await browser.newContext({ viewport: { width: 1280, height: 900 } });
    contexts.push(context);
    return context.newPage();
  }

  /** Opens `url` the way a merchant does: a click on a link in a page of another site. */
  async function clickedFromMail(url: string): Promise<Page> {
    const page = await newPage();
    await page
      .context()
      .route(MAIL, (route) =>
        route.fulfill({ contentType: 'text/html', body: `<!doctype html><a id="go" href="${url}">your deliveries</a>` }),
      );
    await page.goto(MAIL);
    await page.click('#go');
    return page;
  }

  const shot = (page: Page, name: string) => page.screenshot({ path: join(SHOTS, `${name}.png`), fullPage: true });
  const sessionCookie = async (page: Page) => (await page.context().cookies()).find((c) => c.name === 'gw_portal');

  beforeAll(async () => {
    ({ stack, db, listener, browser } = suite);
    shopA = await createMerchant('portal shop a');
    shopB = await createMerchant('portal shop b');
  });

  it("a merchant's link, clicked from another site, sees only its own deliveries and replays one; the replay is audited as the link's", async () => {
    let up = false;
    listener.on('/portal-a', () => ({ status: up ? 200 : 500, headers: { 'content-type': 'text/plain' } }));
    listener.on('/portal-b', () => ({ status: 500 }));
    const [a, b] = await Promise.all([failedDelivery(shopA, '/portal-a'), failedDelivery(shopB, '/portal-b')]);
    const link = await issue(shopA, '1h');
    expect(link.merchantId).toBe(shopA.merchantId);
    expect(link.url.startsWith(`${stack.consoleUrl}/portal/enter?t=`)).toBe(true);
    expect(new Date(link.expiresAt).getTime() - Date.now()).toBeGreaterThan(3_590_000);

    const page = await clickedFromMail(link.url);
    // SameSite=Strict and a click from another site: the entry page moves on by itself, and the session holds.
    await page.waitForURL(/\/portal\/deliveries$/);
    expect(page.url()).not.toContain('t=');
    expect(await sessionCookie(page)).toMatchObject({ httpOnly: true, sameSite: 'Strict', path: '/portal' });
    const list = await page.reload();
    expect(list?.status()).toBe(200);
    expect(list?.headers()['content-security-policy']).toContain("script-src 'self'");
    expect(list?.headers()['cache-control']).toBe('no-store');
    expect(list?.headers()['referrer-policy']).toBe('no-referrer');
    expect(await page.locator(`tr[data-delivery="${a.id}"]`).count()).toBe(1);
    expect(await page.locator(`tr[data-delivery="${b.id}"]`).count()).toBe(0);
    const text = await page.content();
    expect(text).not.toContain(shopB.merchantId);
    expect(text).not.toContain('/console/');
    expect(text).not.toContain('/admin/');
    expect(await page.locator('input[name=merchant]').count()).toBe(0);
    expect(await page.textContent('header')).toContain(shopA.merchantId);
    await shot(page, 'portal');

    // A filter cannot widen the scope.
    await page.goto(`${stack.consoleUrl}/portal/deliveries?merchant=${shopB.merchantId}&state=failed`);
    expect(await page.locator(`tr[data-delivery="${b.id}"]`).count()).toBe(0);
    expect(await page.locator(`tr[data-delivery="${a.id}"]`).count()).toBe(1);

    // Another merchant's delivery answers exactly as a missing one.
    const theirs = await page.goto(`${stack.consoleUrl}/portal/deliveries/${b.id}`);
    const theirsText = (await page.textContent('main'))?.replace(/\s+/g, ' ');
    const missing = await page.goto(`${stack.consoleUrl}/portal/deliveries/${randomUUID()}`);
    expect([theirs?.status(), missing?.status()]).toEqual([404, 404]);
    expect(theirsText).toBe((await page.textContent('main'))?.replace(/\s+/g, ' '));

    await page.goto(`${stack.consoleUrl}/portal/deliveries/${a.id}`);
    expect(await page.locator('#attempts tbody tr').count()).toBe(10);
    // The gateway's traces are not the merchant's: no trace column in the portal.
    expect(await page.locator('#attempts th').allTextContents()).not.toContain('Trace');
    // Not even with a valid CSRF token can it replay another merchant's delivery.
    const csrf = (await page.getAttribute('input[name=_csrf]', 'value')) ?? '';
    const foreign = await page.request.post(`${stack.consoleUrl}/portal/deliveries/${b.id}/replay`, {
      form: { _csrf: csrf },
      maxRedirects: 0,
    });
    expect(foreign.status()).toBe(404);
    expect((await db.query('SELECT status FROM deliveries WHERE id = $1', [b.id])).rows[0].status).toBe('failed');
    const noCsrf = await page.request.post(`${stack.consoleUrl}/portal/deliveries/${a.id}/replay`, { form: {}, maxRedirects: 0 });
    expect(noCsrf.status()).toBe(403);

    up = true;
    await Promise.all([redirectedBack(page, `/portal/deliveries/${a.id}`), page.click('#replay')]);
    await eventually(() => expect(listener.at('/portal-a').length).toBeGreaterThanOrEqual(11), { timeoutMs: 30_000 });
    await eventually(
      async () => {
        await page.goto(`${stack.consoleUrl}/portal/deliveries/${a.id}`);
        expect(await page.textContent('#delivery-state')).toContain('succeeded');
      },
      { timeoutMs: 30_000, intervalMs: 500 },
    );
    const events = (
      await db.query(
        `SELECT operator_id, operator_name, target, outcome, detail FROM audit_events
         WHERE action = 'webhooks:replay' AND operator_name = $1 ORDER BY id`,
        [`portal:${link.id}`],
      )
    ).rows;
    expect(events.map((e) => [e.operator_id, e.target, e.outcome, e.detail.via, e.detail.merchant])).toEqual([
      [null, b.id, 'attempted', 'portal', shopA.merchantId],
      [null, b.id, 'refused', 'portal', shopA.merchantId],
      [null, a.id, 'attempted', 'portal', shopA.merchantId],
      [null, a.id, 'ok', 'portal', shopA.merchantId],
    ]);
    // The issue is audited: attempted naming the merchant (the option given), ok naming the link it made.
    const issued = await db.query(
      `SELECT o.outcome, a.outcome AS attempt, a.target AS asked FROM audit_events o JOIN audit_events a ON a.id = o.attempt_id
       WHERE o.action = 'merchant:portal-link' AND o.target = $1`,
      [link.id],
    );
    expect(issued.rows).toEqual([{ outcome: 'ok', attempt: 'attempted', asked: shopA.merchantId }]);
  });

  it('a short link stops working once it expires: the entry URL and the session already open', async () => {
    // Long enough to outlast the CLI's own start under a loaded CI run (3 s expired before the page opened once).
    const link = await issue(shopA, '15s');
    const page = await newPage();
    await page.goto(link.url);
    await page.waitForURL(/\/portal\/deliveries$/);
    const cookie = await sessionCookie(page);
    expect(cookie).toBeDefined();
    const wait = new Date(link.expiresAt).getTime() - Date.now() + 500;
    await new Promise((r) => setTimeout(r, Math.max(0, wait)));
    const again = await page.reload();
    expect(again?.status()).toBe(401);
    expect(await page.textContent('main')).toContain('This link has expired; ask for a new one.');
    // The server refuses the session itself, not only the browser that dropped the cookie.
    const replayed = await fetch(`${stack.consoleUrl}/portal/deliveries`, { headers: { cookie: `gw_portal=${cookie!.value}` } });
    expect(replayed.status).toBe(401);
    expect((await page.goto(link.url))?.status()).toBe(401);
  });

  it('a tampered, forged or revoked link is refused', async () => {
    const link = await issue(shopA, '1h');
    const token = new URL(link.url).searchParams.get('t')!;
    const [payload, mac] = token.split('.');
    const flip = (s: string, i: number) => s.slice(0, i) + (s[i] === 'A' ? 'B' : 'A') + s.slice(i + 1);
    const [linkId, , expiry] = Buffer.from(payload, 'base64url').toString().split('.');
    const swapped = Buffer.from(`${linkId}.${shopB.merchantId}.${expiry}`).toString('base64url');
    // Signed with the right key but never issued (the test holds the run's PORTAL_LINK_KEY).
    const forged = sealPortal(portalKeys(process.env.PORTAL_LINK_KEY!), 'link', {
      linkId: randomUUID(),
      merchantId: shopA.merchantId,
      expiresAt: new Date(Date.now() + 3_600_000),
    });
    for (const bad of [`${flip(payload, 3)}.${mac}`, `${payload}.${flip(mac, 3)}`, `${swapped}.${mac}`, forged, '', 'x'.repeat(5000)]) {
      const res = await fetch(`${stack.consoleUrl}/portal/enter?t=${encodeURIComponent(bad)}`, { redirect: 'manual' });
      expect(res.status).toBe(401);
      expect(res.headers.get('set-cookie') ?? '').not.toContain('gw_portal=');
    }

    const page = await newPage();
    await page.goto(link.url);
    await page.waitForURL(/\/portal\/deliveries$/);
    const revoked = await runCli<{ id: string; revokedAt: string }>(['merchant:portal-revoke', '--id', link.id]);
    expect(revoked.id).toBe(link.id);
    expect((await page.reload())?.status()).toBe(401);
    expect((await page.goto(link.url))?.status()).toBe(401);
    const twice = await runCliRaw(['merchant:portal-revoke', '--id', link.id]);
    expect(twice.code).not.toBe(0);
    expect(twice.stderr).toContain('revoked already');
  });

  it('hostile filters, cursors, ids and paths answer 4xx pages, never 5xx', async () => {
    const link = await issue(shopA, '1h');
    const page = await newPage();
    await page.goto(link.url);
    await page.waitForURL(/\/portal\/deliveries$/);
    for (const query of [
      'after=%%%',
      'from=-271821-04-20T00:00:00Z',
      'state=nope',
      'transaction=1 OR 1=1',
      `merchant=${'9'.repeat(300)}`,
    ]) {
      const res = await page.request.get(`${stack.consoleUrl}/portal/deliveries?${query}`);
      expect([200, 400]).toContain(res.status());
    }
    expect((await page.request.get(`${stack.consoleUrl}/portal/deliveries/${'-'.repeat(36)}`)).status()).toBe(404);
    const nowhere = await page.request.get(`${stack.consoleUrl}/portal/nowhere`);
    expect(nowhere.status()).toBe(404);
    expect(nowhere.headers()['content-security-policy']).toContain("default-src 'none'");
  });

  it('the CLI refuses a bad --ttl, an unknown merchant and an unknown link, naming the option', async () => {
    for (const ttl of ['2w', '8d', '0s', 'soon']) {
      const run = await runCliRaw(['merchant:portal-link', '--merchant', shopA.merchantId, '--ttl', ttl], {
        CONSOLE_PUBLIC_URL: stack.consoleUrl,
      });
      expect(run.code).not.toBe(0);
      expect(run.stderr).toContain('--ttl');
    }
    const unknown = await runCliRaw(['merchant:portal-link', '--merchant', '0000000000'], { CONSOLE_PUBLIC_URL: stack.consoleUrl });
    expect(unknown.code).not.toBe(0);
    expect(unknown.stderr).toContain('--merchant');
    const noLink = await runCliRaw(['merchant:portal-revoke', '--id', randomUUID()]);
    expect(noLink.code).not.toBe(0);
    expect(noLink.stderr).toContain('--id: no portal link');
    expect((await db.query('SELECT count(*)::int AS n FROM portal_links WHERE merchant_id = $1', [shopA.internalId])).rows[0].n).toBe(4);
  });
});
