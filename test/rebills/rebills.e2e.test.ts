import { Client } from 'pg';
import { approvedRecipients, createMerchant, eventually, MerchantCredentials, post, runCli, Stack, startStack } from '../support/stack';
import { CANARY_CODES, SANDBOX_CARDS } from '../fixtures/cards';
import { LOCAL_LISTENER_ENV } from '../support/deliveries';
import { Listener } from '../support/listener';
import { retireEarlierRebills } from '../support/rebills';

jest.setTimeout(300_000);

// eslint-disable-next-line @typescript-eslint/no-explicit-any
type Json = Record<string, any>;

/**
 * Rebills (docs/merchants/rebills.md) over HTTP with every app booted, against the sandbox acquirer. Time moves with
 * `rebill:run-due --as-of`; each test schedules its rebills in a year of its own, so one test's
 * catch-up never reaches another's cycles.
 */
describe('rebill on /v1/receiver', () => {
  let stack: Stack;
  let shop: MerchantCredentials;
  let db: Client;
  let listener: Listener;
  let ref = 0;

  const receiver = (op: string, body: unknown, m = shop, headers: Record<string, string> = {}) =>
    post(
      stack.baseUrl,
      '/v1/receiver',
      { 'transaction-request': { version: '1.0.0', verification: { merchantId: m.merchantId, merchantKey: m.merchantKey }, [op]: body } },
      headers,
    );

  /** The body the family's PHP SDK sends (Gateway::Rebill): numeric strings, "true" flags. */
  const sdkBody = (o: {
    cardDigit?: number;
    dateStart: string;
    dateEnd: string;
    period?: number | string;
    amount?: number;
    urlReturn?: string | null;
  }) => {
    const amount = o.amount ?? 1990;
    return {
      order: {
        reference: `sub-${++ref}`,
        totalAmount: String(amount),
        period: String(o.period ?? 3),
        frequency: '1',
        dateStart: o.dateStart,
        dateEnd: o.dateEnd,
      },
      paymentCreditCard: {
        acquirer: '26',
        amount: String(amount),
        currency: '986',
        country: 'BRA',
        numberOfPayments: '1',
        groupNumber: '0',
        flag: 'visa',
        cardHolder: 'MARIA SILVA',
        cardNumber: SANDBOX_CARDS[o.cardDigit ?? 1],
        cardSecurityCode: CANARY_CODES[0],
        cardExpirationDate: '203512',
        saveCreditCard: 'true',
        generateToken: 'true',
        departureTax: 'true',
      },
      billing: { name: 'Maria', email: 'maria@example.com', state: 'SP', postalCode: '01310100', country: 'BRA', phone: '11999990000' },
      urlReturn: o.urlReturn === undefined ? listener.url('/rebills') : o.urlReturn,
    };
  };

  const create = async (body: Json): Promise<Json> => {
    const res = await receiver('rebill', body);
    expect(res.status).toBe(200);
    return res.json;
  };
  const report = async (transactionId: string): Promise<Json> => (await receiver('report', { transactionId })).json;
  const runDue = (asOf: string) => runCli<Json>(['rebill:run-due', '--as-of', asOf]);

  /** Every charge of a rebill as recorded, with what the sandbox acquirer did under its operation key. */
  const charges = async (rebillId: string) =>
    (
      await db.query(
        `SELECT c.cycle, c.attempt, to_char(c.cycle_date, 'YYYY-MM-DD') AS date, c.merchant_initiated, t.id, t.status, t.error_code,
           (SELECT count(*)::int FROM sandbox_calls s WHERE s.operation_key = t.id || '-authorize' AND NOT s.repeat) AS acquirer_calls,
           (SELECT s.initiator FROM sandbox_calls s WHERE s.operation_key = t.id || '-authorize' AND NOT s.repeat) AS initiator,
           (SELECT count(*)::int FROM payables p WHERE p.transaction_id = t.id) AS payables
         FROM rebill_cycles c JOIN transactions t ON t.id = c.transaction_id WHERE c.rebill_id = $1 ORDER BY c.cycle, c.attempt`,
        [rebillId.toLowerCase()],
      )
    ).rows as {
      cycle: number;
      attempt: number;
      date: string;
      merchant_initiated: boolean;
      id: string;
      status: number;
      error_code: string;
      acquirer_calls: number;
      initiator: string;
      payables: number;
    }[];

  beforeAll(async () => {
    await retireEarlierRebills();
    listener = await new Listener().start();
    stack = await startStack({ ...LOCAL_LISTENER_ENV, REBILL_RETRY_DAYS: '1,3,5' });
    shop = await createMerchant('rebill shop');
    db = new Client({ connectionString: process.env.DATABASE_URL });
    await db.connect();
  });

  afterAll(async () => {
    await db?.end();
    await stack?.stop();
    await listener?.stop();
  });

  describe('the wire', () => {
    const today = new Date().toISOString().slice(0, 10);
    const nextYear = `${Number(today.slice(0, 4)) + 1}${today.slice(4)}`;

    it('answers the SDK\'s body starting today with status 10 and the first cycle charged in processor.payments["1"]', async () => {
      const body = sdkBody({ dateStart: today, dateEnd: nextYear, urlReturn: null });
      const json = await create(body);
      expect(json).toMatchObject({ operationId: '7', status: '10', message: 'SCHEDULED', order: { reference: body.order.reference } });
      expect(json.transactionId).toMatch(/^[0-9A-F-]{36}$/);
      // An object keyed "1", not an array: the plugins iterate it, the SDK reads payments["1"].
      expect(Array.isArray(json.processor.payments)).toBe(false);
      expect(Object.keys(json.processor.payments)).toEqual(['1']);
      expect(json.processor.payments['1'].payment).toMatchObject({ date: today, amount: '1990', status: '8' });
      expect(json.processor.payments['1'].payment.tid).toMatch(/^[0-9a-f]{20}$/);
      expect(json.tokenCard).toMatch(/^[0-9a-f]{64}$/);
      expect(json.rebill).toMatchObject({ state: 'ACTIVE', period: '3', frequency: '1', cardExpiresBeforeEnd: 'false' });
      // The first charge is a sale of its own: report and cancel reach it by its ticket.
      const ticket = json.processor.payments['1'].payment.ticket;
      expect(await report(ticket)).toMatchObject({
        status: '8',
        processor: { capturedAmount: '1990' },
        rebillPayment: { rebillId: json.transactionId, cycle: '1', attempt: '0' },
      });
      // The card holder took part in the first charge (security code); nothing of the code is stored.
      const [first] = await charges(json.transactionId);
      expect(first).toMatchObject({ cycle: 1, attempt: 0, merchant_initiated: false, initiator: 'customer', acquirer_calls: 1 });
      const stored = await db.query(`SELECT count(*)::int AS n FROM rebills WHERE details::text LIKE '%' || $1 || '%'`, [CANARY_CODES[0]]);
      expect(stored.rows[0].n).toBe(0);
      // report of the rebill answers the same shape.
      expect(await report(json.transactionId)).toMatchObject({
        status: '10',
        processor: { payments: { '1': { payment: { status: '8' } } } },
      });
    });

    it('takes numbers as JSON numbers too, and a token in place of the card', async () => {
      const added = await post(stack.baseUrl, '/v1/token/add', {
        'transaction-request': {
          version: '1.0.0',
          verification: { merchantId: shop.merchantId, merchantKey: shop.merchantKey },
          tokencard: { cardNumber: SANDBOX_CARDS[4], cardHolder: 'MARIA SILVA', cardExpirationDate: '202801', flag: 'visa' },
        },
      });
      expect(added.status).toBe(200);
      const body = sdkBody({ dateStart: '2040-02-10', dateEnd: '2041-02-10' });
      const { cardNumber: _n, cardHolder: _h, cardExpirationDate: _e, cardSecurityCode: _c, ...rest } = body.paymentCreditCard;
      const json = await create({
        ...body,
        order: { ...body.order, totalAmount: 1990, period: 3, frequency: 1 },
        paymentCreditCard: { ...rest, acquirer: 26, amount: 1990, numberOfPayments: 1, tokenCard: added.json.TokenCard },
      });
      expect(json).toMatchObject({ status: '10', tokenCard: added.json.TokenCard, processor: { payments: {} } });
      // The card expires in January 2028, before the schedule ends.
      expect(json.rebill).toMatchObject({ nextDate: '2040-02-10', cardExpiresBeforeEnd: 'true' });
    });

    it.each([
      [{ period: '5' }, 'order.period'],
      [{ dateStart: '2020-01-01' }, 'order.dateStart'],
      [{ dateStart: '2040-02-30' }, 'order.dateStart'],
      [{ dateEnd: '2040-01-01', dateStart: '2040-01-01' }, 'order.dateEnd'],
    ])('refuses %j with a 400 naming %s, and records nothing', async (over, parameter) => {
      const before = (await db.query('SELECT count(*)::int AS n FROM rebills')).rows[0].n;
      const body = sdkBody({ dateStart: '2040-01-01', dateEnd: '2041-01-01' });
      const res = await receiver('rebill', { ...body, order: { ...body.order, ...over } });
      expect(res.status).toBe(400);
      expect(res.json.result.error.parameter).toBe(parameter);
      expect(res.text).not.toContain(SANDBOX_CARDS[1]);
      expect((await db.query('SELECT count(*)::int AS n FROM rebills')).rows[0].n).toBe(before);
    });
  });

  it('a monthly rebill over 12 cycles run with --as-of steps: 12 charges at the acquirer, 12 webhooks, 12 payables sets', async () => {
    const json = await create(sdkBody({ dateStart: '2027-01-15', dateEnd: '2027-12-31', urlReturn: listener.url('/twelve') }));
    const id = json.transactionId;
    for (let month = 1; month <= 12; month++) {
      const asOf = `2027-${String(month).padStart(2, '0')}-15T06:00:00Z`;
      await runDue(asOf);
      // Run twice at the same moment: nothing more is due.
      if (month === 6) await runDue(asOf);
      const done = await charges(id);
      expect(done).toHaveLength(month);
    }
    const all = await charges(id);
    expect(all.map((c) => c.date)).toEqual(Array.from({ length: 12 }, (_, i) => `2027-${String(i + 1).padStart(2, '0')}-15`));
    expect(all.every((c) => c.status === 8 && c.acquirer_calls === 1 && c.initiator === 'merchant' && c.attempt === 0)).toBe(true);
    await eventually(async () => expect((await charges(id)).every((c) => c.payables > 0)).toBe(true), { timeoutMs: 30_000 });
    const hooks = await listener.transactionsAfter('/twelve', 0, 12);
    expect(new Set(hooks)).toEqual(new Set(all.map((c) => c.id)));
    const final = await report(id);
    expect(final.rebill).toMatchObject({ state: 'COMPLETED', cycles: '12', nextDate: '' });
    expect(Object.keys(final.processor.payments)).toEqual(Array.from({ length: 12 }, (_, i) => String(i + 1)));
    // Nothing more, however far time moves.
    await runDue('2029-01-01T00:00:00Z');
    expect(await charges(id)).toHaveLength(12);
  });

  it('a split rebill: every charge splits and settles as a sale, to the cent', async () => {
    const [seller] = await approvedRecipients(shop.merchantId, 1);
    const body = sdkBody({ dateStart: '2037-04-01', dateEnd: '2037-05-01', amount: 10001 });
    const json = await create({
      ...body,
      paymentCreditCard: { ...body.paymentCreditCard, split: [{ recipient: seller, percentage: '33.33' }] },
    });
    await runDue('2037-05-01T01:00:00Z');
    const all = await charges(json.transactionId);
    expect(all.map((c) => c.status)).toEqual([8, 8]);
    for (const c of all) {
      const answer = await report(c.id);
      expect(answer.split).toEqual([expect.objectContaining({ recipient: seller.toLowerCase(), grossAmount: '3333' })]);
      const shares = await eventually(
        async () => {
          const rows = (await db.query(`SELECT recipient_id, gross::int FROM payables WHERE transaction_id = $1`, [c.id])).rows;
          expect(rows.length).toBeGreaterThanOrEqual(2);
          return rows;
        },
        { timeoutMs: 30_000 },
      );
      // Every cent of the charge is someone's: the recipient's share and the merchant's add up to it.
      expect(shares.reduce((sum, r) => sum + r.gross, 0)).toBe(10001);
      expect(shares.find((r) => r.recipient_id === seller.toLowerCase())?.gross).toBe(Number(answer.split[0].grossAmount));
    }
  });

  it('a rebill starting 31 January charges on the last day of shorter months', async () => {
    const json = await create(sdkBody({ dateStart: '2029-01-31', dateEnd: '2029-06-30' }));
    // One run after an outage catches every due cycle up, in due order.
    await runDue('2029-07-01T00:00:00Z');
    const all = await charges(json.transactionId);
    expect(all.map((c) => c.date)).toEqual(['2029-01-31', '2029-02-28', '2029-03-31', '2029-04-30', '2029-05-31', '2029-06-30']);
    expect(all.every((c) => c.status === 8 && c.acquirer_calls === 1)).toBe(true);
    const created = (
      await db.query(`SELECT cycle FROM rebill_cycles WHERE rebill_id = $1 ORDER BY created_at, cycle`, [json.transactionId.toLowerCase()])
    ).rows.map((r) => r.cycle);
    expect(created).toEqual([1, 2, 3, 4, 5, 6]);
  });

  it('a declined cycle is retried after 1, 3 and 5 days, then the rebill is suspended and the merchant told', async () => {
    const json = await create(
      sdkBody({ cardDigit: 2, dateStart: '2031-03-01', dateEnd: '2031-12-31', urlReturn: listener.url('/dunning') }),
    );
    const id = json.transactionId;
    await runDue('2031-03-01T01:00:00Z');
    expect((await charges(id)).map((c) => [c.cycle, c.attempt, c.status])).toEqual([[1, 0, 4]]);
    // Not before its day.
    await runDue('2031-03-01T23:00:00Z');
    expect(await charges(id)).toHaveLength(1);
    await runDue('2031-03-02T01:00:00Z');
    await runDue('2031-03-03T01:00:00Z');
    expect((await charges(id)).map((c) => c.attempt)).toEqual([0, 1]);
    await runDue('2031-03-04T01:00:00Z');
    await runDue('2031-03-06T01:00:00Z');
    const all = await charges(id);
    expect(all.map((c) => [c.cycle, c.attempt, c.date, c.status, c.acquirer_calls])).toEqual([
      [1, 0, '2031-03-01', 4, 1],
      [1, 1, '2031-03-01', 4, 1],
      [1, 2, '2031-03-01', 4, 1],
      [1, 3, '2031-03-01', 4, 1],
    ]);
    const now = await report(id);
    expect(now).toMatchObject({ status: '4', rebill: { state: 'SUSPENDED', suspendedReason: 'retries_exhausted' } });
    expect(now.processor.payments['1'].payment).toMatchObject({ status: '4', attempt: '3', returnCode: '05' });
    await runDue('2031-06-01T00:00:00Z');
    expect(await charges(id)).toHaveLength(4);
    // Four charge outcomes and the suspension.
    const hooks = await listener.transactionsAfter('/dunning', 0, 5);
    expect(hooks.filter((h) => h === id.toLowerCase())).toHaveLength(1);
    const suspension = listener.at('/dunning').find((r) => r.transactionId?.toLowerCase() === id.toLowerCase())!;
    expect(suspension.json.data).toMatchObject({ status: '4', rebill: { state: 'SUSPENDED' } });
  });

  it('a hard decline (blocked card) is not retried: the rebill is suspended at once', async () => {
    const json = await create(sdkBody({ cardDigit: 5, dateStart: '2033-05-05', dateEnd: '2033-12-31' }));
    await runDue('2033-05-05T01:00:00Z');
    await runDue('2033-05-20T01:00:00Z');
    const all = await charges(json.transactionId);
    expect(all.map((c) => [c.attempt, c.status, c.acquirer_calls])).toEqual([[0, 4, 1]]);
    expect(await report(json.transactionId)).toMatchObject({
      status: '4',
      rebill: { state: 'SUSPENDED', suspendedReason: 'hard_decline' },
    });
  });

  it('cancel stops the next cycle; a second cancel is a 409', async () => {
    const json = await create(sdkBody({ dateStart: '2035-01-10', dateEnd: '2035-12-31' }));
    await runDue('2035-01-10T01:00:00Z');
    expect(await charges(json.transactionId)).toHaveLength(1);
    const cancelled = await receiver('cancel', { transactionId: json.transactionId });
    expect(cancelled.status).toBe(200);
    expect(cancelled.json).toMatchObject({ status: '6', message: 'CANCELLED', rebill: { state: 'CANCELLED' } });
    await runDue('2035-06-01T00:00:00Z');
    expect(await charges(json.transactionId)).toHaveLength(1);
    const again = await receiver('cancel', { transactionId: json.transactionId });
    expect(again.status).toBe(409);
    expect(again.json.result.error.code).toBe('034');
    // Another merchant sees no rebill by that id.
    const other = await createMerchant('rebill other shop');
    expect((await receiver('report', { transactionId: json.transactionId }, other)).status).toBe(404);
    expect((await receiver('cancel', { transactionId: json.transactionId }, other)).status).toBe(404);
  });

  it('the operator lists and shows rebills; the ledger verifies and the acquirer reconciles with the charges in them', async () => {
    const listed = await runCli<Json[]>(['rebill:list', '--merchant', shop.merchantId]);
    expect(listed.length).toBeGreaterThanOrEqual(5);
    const suspended = await runCli<Json[]>(['rebill:list', '--merchant', shop.merchantId, '--status', 'suspended']);
    expect(suspended.every((r) => r.state === 'suspended')).toBe(true);
    const shown = await runCli<Json>(['rebill:show', '--id', suspended[0].id]);
    expect(shown).toMatchObject({ id: suspended[0].id, state: 'suspended', response: { status: '4' } });
    expect(shown.charges.length).toBeGreaterThan(0);
    // Every charge is a transaction: the ledger and the acquirer's books cover them as they do sales.
    // (This merchant's: other suites of the lane leave settlements of their own in flight, such as
    // the fault suite's sales whose events went to a Redis it then took away.)
    await runCli(['ledger:verify', '--merchant', shop.merchantId]);
    const reconciled = await runCli<Json>(['acquirer:reconcile', '--merchant', shop.merchantId]);
    expect(reconciled.differences).toEqual([]);
    expect(reconciled.transactions).toBeGreaterThanOrEqual(24);
  });
});
