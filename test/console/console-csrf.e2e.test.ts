import { randomBytes } from 'node:crypto';
import { Client } from 'pg';
import { Listener } from '../support/listener';
import { receiverOf, saleBody } from '../support/money';
import { createMerchant, eventually, MerchantCredentials, runCli, Stack, startStack } from '../support/stack';

jest.setTimeout(180_000);

/** A browser over plain HTTP, by fetch: a cookie jar, GETs and form POSTs without following redirects. */
class Browser {
  readonly jar = new Map<string, string>();

  constructor(private readonly baseUrl: string) {}

  private keep(res: Response): Response {
    for (const c of res.headers.getSetCookie()) {
      const [pair, ...attrs] = c.split(';');
      const at = pair.indexOf('=');
      const [name, value] = [pair.slice(0, at).trim(), pair.slice(at + 1).trim()];
      const gone = !value || attrs.some((a) => /^\s*max-age=0\s*$/i.test(a) || /^\s*expires=thu, 01 jan 1970/i.test(a));
      if (gone) this.jar.delete(name);
      else this.jar.set(name, value);
    }
    return res;
  }

  cookie(): string {
    return [...this.jar].map(([k, v]) => `${k}=${v}`).join('; ');
  }

  async get(path: string): Promise<{ status: number; location: string | null; text: string }> {
    const res = this.keep(await fetch(`${this.baseUrl}${path}`, { headers: { cookie: this.cookie() }, redirect: 'manual' }));
    return { status: res.status, location: res.headers.get('location'), text: await res.text() };
  }

  async post(path: string, form: Record<string, string>): Promise<{ status: number; location: string | null; text: string }> {
    const res = this.keep(
      await fetch(`${this.baseUrl}${path}`, {
        method: 'POST',
        headers: { cookie: this.cookie(), 'content-type': 'application/x-www-form-urlencoded' },
        body: new URLSearchParams(form).toString(),
        redirect: 'manual',
      }),
    );
    return { status: res.status, location: res.headers.get('location'), text: await res.text() };
  }
}

/** The CSRF token of a page's first form. */
const csrfOf = (text: string) => /name="_csrf" value="([^"]*)"/.exec(text)?.[1] ?? '';
/** The success or failure notice a page shows, if any. */
const noticeOf = (text: string) => /id="notice">([^<]*)</.exec(text)?.[1];

/**
 * Issue 32, findings 3 and 6, over HTTP: a CSRF token and cookie obtained without the signed-in
 * session (the sign-in page's, another operator's, another portal link's) are refused on a
 * state-changing POST of that session, and a success notice shows only after the POST that did
 * the work, never from a crafted address.
 */
describe('console and portal: CSRF bound to the session, notices only for what happened', () => {
  let stack: Stack;
  let db: Client;
  let listener: Listener;
  let shop: MerchantCredentials;
  let other: MerchantCredentials;
  const suffix = randomBytes(3).toString('hex');
  const tokens = { operator: '', other: '' };
  let delivery = '';
  let otherDelivery = '';

  const throttle = async () =>
    (await db.query('SELECT webhook_throttle_per_s AS v FROM merchants WHERE id = $1', [shop.internalId])).rows[0].v as number | null;

  /** A delivery of `merchant`'s sale (its state does not matter here). */
  const deliveryOf = async (merchant: MerchantCredentials): Promise<string> => {
    const res = await receiverOf(stack.baseUrl, merchant)('sale', saleBody(5_000, listener.url('/csrf')));
    expect(res.status).toBe(200);
    return eventually(
      async () => {
        const rows = (await db.query('SELECT id FROM deliveries WHERE transaction_id = $1', [String(res.json.transactionId).toLowerCase()]))
          .rows;
        expect(rows.length).toBeGreaterThan(0);
        return rows[0].id as string;
      },
      { timeoutMs: 60_000, intervalMs: 250 },
    );
  };

  const signIn = async (token: string): Promise<Browser> => {
    const b = new Browser(stack.consoleUrl);
    const form = await b.get('/console/sign-in');
    expect(form.status).toBe(200);
    const res = await b.post('/console/sign-in', { token, _csrf: csrfOf(form.text) });
    expect(res).toMatchObject({ status: 303, location: '/console/overview' });
    return b;
  };

  const portalOf = async (merchant: MerchantCredentials): Promise<Browser> => {
    const link = await runCli<{ url: string }>(['merchant:portal-link', '--merchant', merchant.merchantId, '--ttl', '1h'], {
      CONSOLE_PUBLIC_URL: stack.consoleUrl,
    });
    const b = new Browser(stack.consoleUrl);
    expect((await b.get(new URL(link.url).pathname + new URL(link.url).search)).status).toBe(200);
    return b;
  };

  beforeAll(async () => {
    db = new Client({ connectionString: process.env.DATABASE_URL });
    await db.connect();
    listener = await new Listener().start();
    stack = await startStack({}, { withConsole: true });
    shop = await createMerchant('csrf shop');
    other = await createMerchant('csrf other shop');
    tokens.operator = (
      await runCli<{ token: string }>(['operator:create', '--name', `csrf-operator-${suffix}`, '--role', 'operator'])
    ).token;
    tokens.other = (await runCli<{ token: string }>(['operator:create', '--name', `csrf-other-${suffix}`, '--role', 'operator'])).token;
    [delivery, otherDelivery] = [await deliveryOf(shop), await deliveryOf(other)];
  });

  afterAll(async () => {
    await stack?.stop();
    await listener?.stop();
    await db?.end();
  });

  describe('finding 3: CSRF bound to the session', () => {
    it("a pre-sign-in token and cookie, planted in a signed-in operator's browser, are refused (403) and change nothing", async () => {
      const path = `/console/merchants/${shop.merchantId}`;
      // The attacker: the sign-in page, with no session, hands out a CSRF cookie and its token.
      const attacker = new Browser(stack.consoleUrl);
      const form = await attacker.get('/console/sign-in');
      const plantedToken = csrfOf(form.text);
      expect(plantedToken).not.toBe('');
      const plantedCookies = [...attacker.jar];
      expect(plantedCookies.length).toBeGreaterThan(0);

      const victim = await signIn(tokens.operator);
      expect((await victim.get(path)).status).toBe(200);
      // Planted (a sibling subdomain can set a cookie for the host): the attacker's pair beside the victim's session.
      for (const [name, value] of plantedCookies) victim.jar.set(name, value);
      const before = await throttle();
      const forged = await victim.post(`${path}/webhook-throttle`, { perSecond: '3', _csrf: plantedToken });
      expect(forged.status).toBe(403);
      expect(await throttle()).toBe(before);
    });

    it("another operator's session token, with its cookies, is refused in this session; this session's own token passes", async () => {
      const path = `/console/merchants/${shop.merchantId}`;
      const attacker = await signIn(tokens.other);
      const attackerToken = csrfOf((await attacker.get(path)).text);
      const victim = await signIn(tokens.operator);
      const own = csrfOf((await victim.get(path)).text);
      const before = await throttle();
      // Every cookie of the attacker but its session (which the victim's browser keeps).
      for (const [name, value] of attacker.jar) if (!/gw_console$/.test(name)) victim.jar.set(name, value);
      expect((await victim.post(`${path}/webhook-throttle`, { perSecond: '4', _csrf: attackerToken })).status).toBe(403);
      expect(await throttle()).toBe(before);
      const saved = await victim.post(`${path}/webhook-throttle`, { perSecond: '5', _csrf: own });
      expect(saved.status).toBe(303);
      expect(await throttle()).toBe(5);
    });

    it('the sign-in form still needs its own token (login CSRF), and a pre-sign-in token is worth nothing after sign-in', async () => {
      const b = new Browser(stack.consoleUrl);
      const form = await b.get('/console/sign-in');
      expect((await b.post('/console/sign-in', { token: tokens.operator })).status).toBe(403);
      expect((await b.post('/console/sign-in', { token: tokens.operator, _csrf: 'forged' })).status).toBe(403);
      const preSession = csrfOf(form.text);
      expect((await b.post('/console/sign-in', { token: tokens.operator, _csrf: preSession })).status).toBe(303);
      expect((await b.post('/console/sign-out', { _csrf: preSession })).status).toBe(403);
      const overview = await b.get('/console/overview');
      expect(overview.status).toBe(200);
      expect((await b.post('/console/sign-out', { _csrf: csrfOf(overview.text) })).status).toBe(303);
    });

    it("the portal: another link's token and cookies, planted in a merchant's browser, are refused (403)", async () => {
      const attacker = await portalOf(other);
      const attackerToken = csrfOf((await attacker.get(`/portal/deliveries/${otherDelivery}`)).text);
      expect(attackerToken).not.toBe('');
      const victim = await portalOf(shop);
      expect((await victim.get(`/portal/deliveries/${delivery}`)).status).toBe(200);
      for (const [name, value] of attacker.jar) if (!/gw_portal$/.test(name)) victim.jar.set(name, value);
      const forged = await victim.post(`/portal/deliveries/${delivery}/replay`, { _csrf: attackerToken });
      expect(forged.status).toBe(403);
      // Its own token passes.
      const own = csrfOf((await victim.get(`/portal/deliveries/${delivery}`)).text);
      expect((await victim.post(`/portal/deliveries/${delivery}/replay`, { _csrf: own })).status).toBe(303);
    });
  });

  describe('finding 6: notices only for what happened', () => {
    it('a crafted ?saved=1 shows no notice; the POST that saved shows it once', async () => {
      const operator = await signIn(tokens.operator);
      const path = `/console/merchants/${shop.merchantId}`;
      const crafted = await operator.get(`${path}?saved=1`);
      expect(crafted.status).toBe(200);
      expect(noticeOf(crafted.text)).toBeUndefined();

      const saved = await operator.post(`${path}/webhook-throttle`, { perSecond: '6', _csrf: csrfOf(crafted.text) });
      expect(saved.status).toBe(303);
      const after = await operator.get(saved.location!);
      expect(noticeOf(after.text)).toContain('Saved.');
      expect(noticeOf((await operator.get(saved.location!)).text)).toBeUndefined();
    });

    it('crafted ?done=enabled&released=N and ?replay=queued show no notice, in the console and the portal', async () => {
      const operator = await signIn(tokens.operator);
      const listeners = await operator.get(`/console/listeners?merchant=${shop.merchantId}&done=enabled&released=41`);
      expect(listeners.status).toBe(200);
      expect(noticeOf(listeners.text)).toBeUndefined();
      for (const flag of ['queued', 'held', 'refused']) {
        const page = await operator.get(`/console/deliveries/${delivery}?replay=${flag}`);
        expect(page.status).toBe(200);
        expect(noticeOf(page.text)).toBeUndefined();
      }
      const portal = await portalOf(shop);
      const page = await portal.get(`/portal/deliveries/${delivery}?replay=queued`);
      expect(page.status).toBe(200);
      expect(noticeOf(page.text)).toBeUndefined();
    });

    it("a notice is the session's own: one made in another session is not shown in this one", async () => {
      const operator = await signIn(tokens.operator);
      const path = `/console/merchants/${shop.merchantId}`;
      const saved = await operator.post(`${path}/webhook-throttle`, { perSecond: '8', _csrf: csrfOf((await operator.get(path)).text) });
      expect(saved.status).toBe(303);
      const other = await signIn(tokens.other);
      for (const [name, value] of operator.jar) if (!/gw_console$/.test(name)) other.jar.set(name, value);
      expect(noticeOf((await other.get(saved.location!)).text)).toBeUndefined();
      // A replay's notice (queued, held or refused, whatever state the delivery was in) is on the next page, once.
      const replay = await operator.post(`/console/deliveries/${delivery}/replay`, {
        _csrf: csrfOf((await operator.get(`/console/deliveries/${delivery}`)).text),
      });
      expect(replay.status).toBe(303);
      expect(noticeOf((await operator.get(replay.location!)).text)).toMatch(/^(Replay queued|Only a failed or blocked delivery)/);
      expect(noticeOf((await operator.get(replay.location!)).text)).toBeUndefined();
    });
  });
});
