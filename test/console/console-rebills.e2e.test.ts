import { randomBytes, randomUUID } from 'node:crypto';
import { Page } from 'playwright-core';
import { CANARY_CODES, SANDBOX_CARDS } from '../fixtures/cards';
import { ConsoleSuite, shot, startConsoleSuite, stopConsoleSuite } from '../support/console-browser';
import { receiverOf } from '../support/money';
import { createMerchant, MerchantCredentials, runCli } from '../support/stack';
import { retireEarlierRebills } from '../support/rebills';

jest.setTimeout(300_000);

// eslint-disable-next-line @typescript-eslint/no-explicit-any
type Json = Record<string, any>;

/** A reference no page may render as markup (64 characters at most, as the wire allows). */
const HOSTILE = `<script>alert("rb")</script><img src=x onerror=alert(1)>'&`;

/**
 * The console's Rebills pages in a real browser, read by a viewer: a merchant's rebills reached
 * from its page, each state among them (active, suspended by retries and by a hard decline,
 * cancelled, completed), cycles charged, next charge, the card-expiry flag, the state filter,
 * keyset pages, a rebill's every charge with its dunning retries, a hostile reference shown as
 * text, nothing of the card beyond its masked number, and bad input answered 4xx. Time moves with
 * `rebill:run-due --as-of`; the schedules are in 2070 and later, out of every other suite's way.
 */
describe('the Rebills pages of the console', () => {
  let s: ConsoleSuite;
  const suffix = randomBytes(3).toString('hex');
  const ids: Record<'ok' | 'dunning' | 'hard' | 'cancelled' | 'completed' | 'hostile', string> = {
    ok: '',
    dunning: '',
    hard: '',
    cancelled: '',
    completed: '',
    hostile: '',
  };
  /** What creation answered (the token card among it): none of it but the masked number may reach a page. */
  const created: Json[] = [];
  let ref = 0;

  const rebillBody = (o: { card: number; reference?: string; period?: number; start: string; end: string; expires?: string }) => ({
    order: {
      reference: o.reference ?? `crb-${suffix}-${++ref}`,
      totalAmount: '1990',
      period: String(o.period ?? 3),
      frequency: '1',
      dateStart: o.start,
      dateEnd: o.end,
    },
    paymentCreditCard: {
      acquirer: '26',
      amount: '1990',
      currency: '986',
      country: 'BRA',
      numberOfPayments: '1',
      flag: 'visa',
      cardHolder: 'MARIA SILVA',
      cardNumber: SANDBOX_CARDS[o.card],
      cardSecurityCode: CANARY_CODES[0],
      cardExpirationDate: o.expires ?? '203512',
    },
  });
  const create = async (body: Json, shop: MerchantCredentials = s.shop): Promise<string> => {
    const res = await receiverOf(s.stack.baseUrl, shop)('rebill', body);
    expect(res.status).toBe(200);
    created.push(res.json);
    return String(res.json.transactionId).toLowerCase();
  };
  const runDue = (asOf: string) => runCli<Json>(['rebill:run-due', '--as-of', asOf]);
  const signedIn = (token: string) => s.browser.signedIn(s.stack.consoleUrl, token, { width: 1400, height: 800 });
  const rowOf = (page: Page, id: string) => page.locator(`tr[data-rebill="${id}"]`);
  const text = async (page: Page, css: string) => (await page.textContent(css))?.trim();
  const cell = async (page: Page, id: string, css: string) => (await rowOf(page, id).locator(css).textContent())?.trim();
  const listed = async (page: Page) =>
    page.locator('#rebills tbody tr').evaluateAll((rows) => rows.map((r) => r.getAttribute('data-rebill')));

  beforeAll(async () => {
    await retireEarlierRebills();
    s = await startConsoleSuite('crb', suffix);
    ids.ok = await create(rebillBody({ card: 1, start: '2070-01-10', end: '2070-12-31' }));
    // A card valid past the schedule's end: no expiry flag.
    ids.dunning = await create(rebillBody({ card: 2, start: '2070-02-01', end: '2070-12-31', expires: '207912' }));
    ids.hard = await create(rebillBody({ card: 5, start: '2070-02-01', end: '2070-06-30' }));
    ids.cancelled = await create(rebillBody({ card: 1, start: '2070-06-01', end: '2070-12-31' }));
    ids.completed = await create(rebillBody({ card: 1, period: 1, start: '2070-01-01', end: '2070-01-03', expires: '207912' }));
    ids.hostile = await create(rebillBody({ card: 1, reference: HOSTILE, start: '2070-09-01', end: '2071-08-31' }));
    const cancelled = await receiverOf(s.stack.baseUrl, s.shop)('cancel', { transactionId: ids.cancelled.toUpperCase() });
    expect(cancelled.status).toBe(200);
    // The daily one completes and the blocked card is suspended at once; the declined one is tried again 1, 3 and 5 days on.
    for (const asOf of ['2070-02-01T01:00:00Z', '2070-02-02T01:00:00Z', '2070-02-04T01:00:00Z', '2070-02-06T01:00:00Z']) await runDue(asOf);
    // Cycles 2 and 3 of the monthly one, caught up in one run.
    await runDue('2070-03-10T06:00:00Z');
  });

  afterAll(() => stopConsoleSuite(s ?? {}));

  it("a viewer opens a merchant's rebills from its page: each state, cycles charged, next charge and the card-expiry flag", async () => {
    const page = await signedIn(s.tokens.viewer);
    const problems: string[] = [];
    page.on('pageerror', (e) => problems.push(e.message));
    page.on('dialog', (d) => {
      problems.push(`dialog: ${d.message()}`);
      void d.dismiss();
    });
    await page.goto(`${s.stack.consoleUrl}/console/merchants/${s.shop.merchantId}`);
    await Promise.all([page.waitForURL(/\/console\/rebills\?merchant=/), page.click('#merchant-rebills')]);
    // Newest first: the reverse of creation.
    expect(await listed(page)).toEqual([ids.hostile, ids.completed, ids.cancelled, ids.hard, ids.dunning, ids.ok]);

    expect(await cell(page, ids.ok, '.rebill-state')).toBe('active');
    expect(await cell(page, ids.ok, '.cycles')).toBe('3 of 12');
    expect(await cell(page, ids.ok, '.next')).toBe('2070-04-10');
    expect(await cell(page, ids.ok, '.card')).toContain('card expires before end');
    expect(await rowOf(page, ids.ok).textContent()).toMatch(/1990 \(986\)[\s\S]*every month[\s\S]*2070-01-10 – 2070-12-31/);

    expect(await cell(page, ids.dunning, '.rebill-state')).toBe('suspended');
    expect(await cell(page, ids.dunning, '.suspended')).toContain('retries_exhausted');
    expect(await cell(page, ids.dunning, '.cycles')).toBe('0 of 11');
    expect(await cell(page, ids.dunning, '.next')).toBe('—');
    expect(await cell(page, ids.dunning, '.card')).toMatch(/^\S+ valid through the end$/);

    expect(await cell(page, ids.hard, '.suspended')).toContain('hard_decline');
    expect(await cell(page, ids.cancelled, '.rebill-state')).toBe('cancelled');
    expect(await cell(page, ids.cancelled, '.cycles')).toBe('0 of 7');
    expect(await cell(page, ids.completed, '.rebill-state')).toBe('completed');
    expect(await cell(page, ids.completed, '.cycles')).toBe('3 of 3');
    expect(await rowOf(page, ids.completed).textContent()).toContain('every day');

    // The hostile reference is text on the page, never markup: nothing ran, no element was made of it.
    expect(await cell(page, ids.hostile, '.reference')).toBe(HOSTILE);
    expect(await cell(page, ids.hostile, '.next')).toBe('2070-09-01');
    expect(await page.locator('main script, main img').count()).toBe(0);
    expect(await page.content()).not.toContain('<script>alert');
    // Read-only: no form posts anything but the header's sign-out.
    expect(await page.locator('main form[method=post]').count()).toBe(0);
    await shot(page, 'rebills');
    expect(problems).toEqual([]);
  });

  it('the state filter narrows the list, and a rebill opens with its schedule and every charge, dunning retries included', async () => {
    const page = await signedIn(s.tokens.viewer);
    await page.goto(`${s.stack.consoleUrl}/console/rebills?merchant=${s.shop.merchantId}`);
    await page.selectOption('select[name=state]', 'suspended');
    await Promise.all([page.waitForURL(/state=suspended/), page.click('form.filters button[type=submit]')]);
    expect(await listed(page)).toEqual([ids.hard, ids.dunning]);
    await page.goto(`${s.stack.consoleUrl}/console/rebills?merchant=${s.shop.merchantId}&state=completed`);
    expect(await listed(page)).toEqual([ids.completed]);

    await page.goto(`${s.stack.consoleUrl}/console/rebills?merchant=${s.shop.merchantId}&state=suspended`);
    await Promise.all([page.waitForURL(new RegExp(`/console/rebills/${ids.dunning}$`)), rowOf(page, ids.dunning).locator('a').click()]);
    expect(await text(page, '#rebill-state')).toBe('suspended');
    expect(await text(page, '#rebill-cycles')).toBe('0 of 11 (4 charges tried)');
    const charges = page.locator('#charges tbody tr');
    expect(await charges.count()).toBe(4);
    const rows = await charges.evaluateAll((trs) => trs.map((tr) => [...tr.querySelectorAll('td')].map((td) => td.textContent!.trim())));
    const recorded = (
      await s.db.query(`SELECT transaction_id FROM rebill_cycles WHERE rebill_id = $1 ORDER BY cycle, attempt`, [ids.dunning])
    ).rows.map((r) => String(r.transaction_id).toUpperCase());
    // Cycle, attempt, cycle date, due, (opened), transaction, initiated by, amount, status, error code, return code.
    expect(
      rows.map((r) => [r[0], r[1], r[2], r[3], r[5].split(/\s+/)[0], r[6], r[7], r[8].split(/\s+/).slice(0, 2).join(' '), r[10]]),
    ).toEqual(
      [
        ['1', 'first try', '2070-02-01', '2070-02-01'],
        ['1', 'retry 1', '2070-02-01', '2070-02-02'],
        ['1', 'retry 2', '2070-02-01', '2070-02-04'],
        ['1', 'retry 3', '2070-02-01', '2070-02-06'],
      ].map((r, i) => [...r, recorded[i], 'merchant', '1990 (986)', '4 UNAUTHORIZED', '05']),
    );
    await shot(page, 'rebill');

    await page.goto(`${s.stack.consoleUrl}/console/rebills/${ids.ok}`);
    expect(await text(page, '#rebill-cycles')).toBe('3 of 12 (3 charges tried)');
    expect(await text(page, '#rebill-next')).toBe('2070-04-10');
    expect(await page.locator('#charges tbody tr .status').allTextContents()).toEqual(
      Array.from({ length: 3 }, () => expect.stringMatching(/^\s*8 APPROVED/)),
    );
    await page.goto(`${s.stack.consoleUrl}/console/rebills/${ids.hard}`);
    expect(await text(page, '#charges tbody tr .return-code')).toBe('78');
    await page.goto(`${s.stack.consoleUrl}/console/rebills/${ids.hostile}`);
    expect(await text(page, '#rebill-reference')).toBe(HOSTILE);
    expect(await page.title()).toContain(HOSTILE.slice(0, 40));
    expect(await page.locator('main script, main img').count()).toBe(0);
  });

  it('shows nothing of a card beyond its masked number: no card number, token or expiry', async () => {
    const page = await signedIn(s.tokens.viewer);
    const masked: string[] = (
      await s.db.query(`SELECT DISTINCT masked_card FROM rebills WHERE merchant_id = $1`, [s.shop.internalId])
    ).rows.map((r) => r.masked_card);
    const pages: string[] = [];
    await page.goto(`${s.stack.consoleUrl}/console/rebills?merchant=${s.shop.merchantId}`);
    pages.push(await page.content());
    for (const id of Object.values(ids)) {
      await page.goto(`${s.stack.consoleUrl}/console/rebills/${id}`);
      pages.push(await page.content());
    }
    const all = pages.join('\n');
    for (const m of masked) expect(all).toContain(m);
    for (const d of [1, 2, 5]) expect(all).not.toContain(SANDBOX_CARDS[d]);
    for (const c of created) expect(all).not.toContain(c.tokenCard);
    expect(all).not.toMatch(/2035-12|203512|2079-12|207912/);
  });

  it('pages by keyset, 50 a page, without repeating or skipping rows created in the same microsecond', async () => {
    const paging = await createMerchant(`crb paging shop ${suffix}`);
    // Made in SQL: 60 rebills through the API would take long, and only SQL can give them one creation time.
    await s.db.query(
      `INSERT INTO rebills (id, merchant_id, reference, period, frequency, date_start, date_end, retry_days, acquirer, instalments, currency,
         amount, token_card, masked_card, brand, card_expires, details, created_at)
       SELECT gen_random_uuid(), $1, 'page-' || i, 3, 1, '2072-01-01', '2072-12-31', '{1,3,5}', 26, 1, '986', 100, repeat('0', 64),
         '411111******1111', 'visa', '2079-12-31', '{"method":1}', '2070-01-01 10:00:00.123456+00'::timestamptz + (i % 3) * interval '1 microsecond'
       FROM generate_series(1, 60) i`,
      [paging.internalId],
    );
    const page = await signedIn(s.tokens.viewer);
    await page.goto(`${s.stack.consoleUrl}/console/rebills?merchant=${paging.merchantId}`);
    const first = await listed(page);
    expect(first).toHaveLength(50);
    await Promise.all([page.waitForURL(/after=/), page.click('#next-page')]);
    const second = await listed(page);
    expect(second).toHaveLength(10);
    expect(await page.locator('#next-page').count()).toBe(0);
    const expected = (
      await s.db.query(`SELECT id FROM rebills WHERE merchant_id = $1 ORDER BY created_at DESC, id DESC`, [paging.internalId])
    ).rows.map((r) => r.id);
    expect([...first, ...second]).toEqual(expected);
    // Another merchant's rebills never show in this one's list.
    await page.goto(`${s.stack.consoleUrl}/console/rebills?merchant=${s.shop.merchantId}`);
    expect(await listed(page)).toHaveLength(Object.keys(ids).length);
  });

  it('asks for a merchant first, and answers hostile filters, cursors and ids with 4xx, never 5xx', async () => {
    const page = await signedIn(s.tokens.viewer);
    await page.goto(`${s.stack.consoleUrl}/console/rebills`);
    expect(await page.textContent('#ask-merchant')).toContain('Enter a merchant id');
    const badCursor = Buffer.from(JSON.stringify(['2070-99-99 99:99:99+00', randomUUID()])).toString('base64url');
    for (const [query, status] of [
      [`merchant=${s.shop.merchantId}&state=nope`, 400],
      [`merchant=${s.shop.merchantId}&after=%%%`, 400],
      [`merchant=${s.shop.merchantId}&after=${badCursor}`, 400],
      ['merchant=0000000000', 400],
      [`merchant=${encodeURIComponent(HOSTILE)}`, 400],
    ] as const) {
      const res = await page.request.get(`${s.stack.consoleUrl}/console/rebills?${query}`);
      expect([query, res.status()]).toEqual([query, status]);
      expect(await res.text()).not.toContain('<script>alert');
    }
    for (const id of ['not-a-uuid', randomUUID(), `${'-'.repeat(36)}`])
      expect((await page.request.get(`${s.stack.consoleUrl}/console/rebills/${id}`)).status()).toBe(404);
  });
});
