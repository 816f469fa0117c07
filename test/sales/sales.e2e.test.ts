import { Client } from 'pg';
import { createMerchant, eventually, MerchantCredentials, post, Stack, startStack } from '../support/stack';
import { CANARY_CODES, SANDBOX_CARDS } from '../fixtures/cards';

jest.setTimeout(180_000);

// eslint-disable-next-line @typescript-eslint/no-explicit-any
type Json = Record<string, any>;

/** Card sales over HTTP with every app booted, against the sandbox acquirer (docs/merchants/sales.md and sandbox.md). */
describe('card sales on /v1/receiver', () => {
  let stack: Stack;
  let shop: MerchantCredentials;
  let other: MerchantCredentials;
  let ref = 0;

  const receiver = (m: MerchantCredentials, op: string, body: unknown, headers: Record<string, string> = {}) =>
    post(
      stack.baseUrl,
      '/v1/receiver',
      { 'transaction-request': { version: '1.0.0', verification: { merchantId: m.merchantId, merchantKey: m.merchantKey }, [op]: body } },
      headers,
    );

  const saleBody = (cardNumber: string, amount = 150000, over: Json = {}) => ({
    order: { reference: `R-${++ref}`, totalAmount: amount },
    payment: {
      acquirer: 26,
      method: 1,
      amount,
      currency: '986',
      country: 'BRA',
      numberOfPayments: 1,
      flag: 'visa',
      cardHolder: 'MARIA SILVA',
      cardNumber,
      cardSecurityCode: CANARY_CODES[0],
      cardExpirationDate: '203012',
      ...over,
    },
    billing: { name: 'Maria', email: 'maria@example.com', state: 'SP', postalCode: '01310100', country: 'BRA', phone: '11999990000' },
    urlReturn: 'https://merchant.example/listener?shop=1',
    fraud: 'false',
  });

  beforeAll(async () => {
    stack = await startStack({ SANDBOX_SLOW_APPROVAL_MS: '1500' });
    shop = await createMerchant('sales shop');
    other = await createMerchant('sales other shop');
  });

  afterAll(async () => {
    await stack?.stop();
  });

  describe('sandbox outcomes by last digit', () => {
    const cases: [number, string, string, string][] = [
      [0, '8', '00', ''],
      [1, '8', '00', ''],
      [4, '8', '00', ''],
      [6, '8', '00', ''],
      [2, '4', '05', ''],
      [3, '4', '54', ''],
      [5, '4', '78', ''],
      [7, '4', '14', ''],
      [8, '4', '91', '100'],
      [9, '8', '00', ''],
    ];
    it.each(cases)('card ending in %i: status %s, return code %s, error %p', async (digit, status, returnCode, errorCode) => {
      const res = await receiver(shop, 'sale', saleBody(SANDBOX_CARDS[digit]));
      expect(res.status).toBe(200);
      expect(res.json).toMatchObject({
        operationId: '3',
        status,
        errorCode,
        statusVersion: '2',
        processor: { returnCode, acquirer: '26', amount: '150000' },
      });
      expect(res.json.transactionId).toMatch(/^[0-9A-F]{8}-[0-9A-F]{4}-[0-9A-F]{4}-[0-9A-F]{4}-[0-9A-F]{12}$/);
      expect(res.json.processor.capturedAmount).toBe(status === '8' ? '150000' : '0');
      expect(JSON.stringify(res.json)).not.toContain(SANDBOX_CARDS[digit]);
    });
  });

  it('accepts every scalar as a string (inline card, plugin style)', async () => {
    const body = saleBody(SANDBOX_CARDS[1], 2500);
    const stringly = JSON.parse(JSON.stringify(body, (_k, v) => (typeof v === 'number' ? String(v) : v)));
    const res = await receiver(shop, 'sale', stringly);
    expect(res.status).toBe(200);
    expect(res.json).toMatchObject({ status: '8', order: { totalAmount: '2500', currency: '986' } });
  });

  it('runs the sequence of an existing SDK: token/add, then sale with only tokenCard, report, capture, cancel', async () => {
    const token = await post(stack.baseUrl, '/v1/token/add', {
      'transaction-request': {
        version: '1.0.0',
        verification: shop,
        tokencard: {
          cardNumber: SANDBOX_CARDS[6],
          cardHolder: 'SDK USER',
          cardExpirationDate: '203111',
          cardSecurityCode: CANARY_CODES[1],
        },
      },
    });
    expect(token.status).toBe(200);
    const sale = await receiver(shop, 'authorize', {
      order: { reference: 'SDK-1', totalAmount: 10000 },
      payment: {
        acquirer: 26,
        method: 1,
        amount: 10000,
        currency: 986,
        country: 'BRA',
        numberOfPayments: 1,
        tokenCard: token.json.TokenCard,
      },
      fraud: 'true',
    });
    expect(sale.status).toBe(200);
    expect(sale.json).toMatchObject({ operationId: '1', status: '3' });
    const id = sale.json.transactionId;
    expect((await receiver(shop, 'report', { transactionId: id })).json).toMatchObject({
      operationId: '6',
      status: '3',
      transactionId: id,
    });
    expect((await receiver(shop, 'report', { reference: 'SDK-1' })).json.transactionId).toBe(id);
    const captured = await receiver(shop, 'capture', { transactionId: id });
    expect(captured.json).toMatchObject({ operationId: '2', status: '8', statusVersion: '3', processor: { capturedAmount: '10000' } });
    const cancelled = await receiver(shop, 'cancel', { transactionId: id });
    expect(cancelled.json).toMatchObject({ operationId: '5', status: '6', statusVersion: '4', processor: { cancelledAmount: '10000' } });
  });

  it('stores the card and returns tokenCard when generateToken is true', async () => {
    const res = await receiver(shop, 'sale', saleBody(SANDBOX_CARDS[4], 3000, { generateToken: 'true' }));
    expect(res.json.tokenCard).toMatch(/^[0-9a-f]{64}$/);
    const again = await post(stack.baseUrl, '/v1/token/retrieve', {
      'transaction-request': { version: '1.0.0', verification: shop, 'retrieve-token': { token: res.json.tokenCard } },
    });
    expect(again.json.BIN).toBe(`400700******${SANDBOX_CARDS[4].slice(-4)}`);
  });

  it("refuses another merchant's token and transaction as unknown", async () => {
    const token = await post(stack.baseUrl, '/v1/token/add', {
      'transaction-request': {
        version: '1.0.0',
        verification: shop,
        tokencard: { cardNumber: SANDBOX_CARDS[0], cardHolder: 'X', cardExpirationDate: '203012' },
      },
    });
    const theirs = await receiver(other, 'sale', {
      ...saleBody(SANDBOX_CARDS[0]),
      payment: { acquirer: 26, method: 1, amount: 150000, currency: '986', country: 'BRA', tokenCard: token.json.TokenCard },
    });
    expect(theirs.status).toBe(404);
    const mine = await receiver(shop, 'sale', saleBody(SANDBOX_CARDS[0]));
    const report = await receiver(other, 'report', { transactionId: mine.json.transactionId });
    expect(report.status).toBe(404);
    expect(report.json.result.error.code).toBe('035');
  });

  describe('state machine', () => {
    it('rejects illegal transitions with 409 and the family codes', async () => {
      const sale = await receiver(shop, 'sale', saleBody(SANDBOX_CARDS[1]));
      const id = sale.json.transactionId;
      expect((await receiver(shop, 'capture', { transactionId: id })).json.result.error).toMatchObject({ code: '036' });
      expect((await receiver(shop, 'cancel', { transactionId: id })).json.status).toBe('6');
      const again = await receiver(shop, 'cancel', { transactionId: id });
      expect(again.status).toBe(409);
      expect(again.json.result.error.code).toBe('034');
      const declined = await receiver(shop, 'sale', saleBody(SANDBOX_CARDS[2]));
      expect((await receiver(shop, 'capture', { transactionId: declined.json.transactionId })).status).toBe(409);
      expect((await receiver(shop, 'capture', { transactionId: '00000000-0000-4000-8000-000000000000' })).json.result.error.code).toBe(
        '035',
      );
    });

    it('lets exactly one of 20 concurrent captures succeed', async () => {
      const auth = await receiver(shop, 'authorize', saleBody(SANDBOX_CARDS[1], 5000));
      expect(auth.json.status).toBe('3');
      const results = await Promise.all(
        Array.from({ length: 20 }, () => receiver(shop, 'capture', { transactionId: auth.json.transactionId })),
      );
      const ok = results.filter((r) => r.status === 200);
      expect(ok).toHaveLength(1);
      expect(results.filter((r) => r.status === 409).every((r) => r.json.result.error.code === '036')).toBe(true);
      expect(results.filter((r) => r.status !== 200 && r.status !== 409)).toEqual([]);
      expect((await receiver(shop, 'report', { transactionId: auth.json.transactionId })).json).toMatchObject({
        status: '8',
        statusVersion: '3',
      });
    });

    it('adds up a partial capture and partial cancels', async () => {
      const auth = await receiver(shop, 'authorize', saleBody(SANDBOX_CARDS[1], 10000));
      const id = auth.json.transactionId;
      expect((await receiver(shop, 'capture', { transactionId: id, amount: 8000 })).json.processor).toMatchObject({
        capturedAmount: '8000',
      });
      const first = await receiver(shop, 'cancel', { transactionId: id, amount: '3000' });
      expect(first.json).toMatchObject({ status: '12', processor: { capturedAmount: '8000', cancelledAmount: '3000' } });
      const tooMuch = await receiver(shop, 'cancel', { transactionId: id, amount: 6000 });
      expect(tooMuch.status).toBe(400);
      expect(tooMuch.json.result.error.parameter).toBe('amount');
      const rest = await receiver(shop, 'cancel', { transactionId: id, amount: 5000 });
      expect(rest.json).toMatchObject({ status: '6', statusVersion: '5', processor: { cancelledAmount: '8000' } });
    });
  });

  it('records transaction.status_changed only for a sale with a listener (urlReturn)', async () => {
    const eventsOf = async (transactionId: string) => {
      const db = new Client({ connectionString: process.env.DATABASE_URL });
      await db.connect();
      try {
        const rows = await db.query<{ event: string }>('SELECT event FROM outbox WHERE aggregate_id = $1 ORDER BY event', [
          transactionId.toLowerCase(),
        ]);
        return rows.rows.map((r) => r.event);
      } finally {
        await db.end();
      }
    };
    const withListener = await receiver(shop, 'sale', saleBody(SANDBOX_CARDS[1]));
    const { urlReturn: _, ...silent } = saleBody(SANDBOX_CARDS[1]);
    const withoutListener = await receiver(shop, 'sale', silent);
    const { urlReturn: __, ...silentDecline } = saleBody(SANDBOX_CARDS[2]);
    const declined = await receiver(shop, 'sale', silentDecline);
    expect([withListener.json.status, withoutListener.json.status, declined.json.status]).toEqual(['8', '8', '4']);
    expect(await eventsOf(withListener.json.transactionId)).toEqual(['transaction.captured', 'transaction.status_changed']);
    expect(await eventsOf(withoutListener.json.transactionId)).toEqual(['transaction.captured']);
    expect(await eventsOf(declined.json.transactionId)).toEqual([]);
    // The status change itself is recorded all the same.
    expect((await receiver(shop, 'report', { transactionId: declined.json.transactionId })).json).toMatchObject({
      status: '4',
      statusVersion: '2',
    });
  });

  describe('sync wait with a safe fallback', () => {
    it('answers 202 with status 0 at once for Prefer: respond-async, and the outcome is recorded', async () => {
      const res = await receiver(shop, 'sale', saleBody(SANDBOX_CARDS[1]), { prefer: 'respond-async' });
      expect(res.status).toBe(202);
      expect(res.json).toMatchObject({ status: '0', message: 'WAITING FOR PAYMENT', statusVersion: '1' });
      await eventually(
        async () => expect((await receiver(shop, 'report', { transactionId: res.json.transactionId })).json.status).toBe('8'),
        { timeoutMs: 15_000 },
      );
    });
  });

  describe('Idempotency-Key', () => {
    it('replays the same answer for the same key and body, once', async () => {
      const body = saleBody(SANDBOX_CARDS[1], 4321);
      const first = await receiver(shop, 'sale', body, { 'idempotency-key': 'order-4321' });
      const second = await receiver(shop, 'sale', body, { 'idempotency-key': 'order-4321' });
      expect(first.headers['idempotent-replayed']).toBeUndefined();
      expect(second.headers['idempotent-replayed']).toBe('true');
      expect(second.status).toBe(first.status);
      expect(second.json).toEqual(first.json);
      const byRef = await receiver(shop, 'report', { reference: body.order.reference });
      expect(byRef.json.transactionId).toBe(first.json.transactionId);
    });

    it('answers 409 to the same key with another body', async () => {
      await receiver(shop, 'sale', saleBody(SANDBOX_CARDS[1], 1000), { 'idempotency-key': 'reused-key' });
      const res = await receiver(shop, 'sale', saleBody(SANDBOX_CARDS[1], 2000), { 'idempotency-key': 'reused-key' });
      expect(res.status).toBe(409);
      expect(res.json.result.error).toMatchObject({ code: '409', parameter: 'Idempotency-Key' });
    });

    it('runs concurrent requests with one key once', async () => {
      const body = saleBody(SANDBOX_CARDS[9], 7777);
      const results = await Promise.all(
        Array.from({ length: 8 }, () => receiver(shop, 'sale', body, { 'idempotency-key': 'concurrent-7777' })),
      );
      expect(new Set(results.map((r) => r.json.transactionId)).size).toBe(1);
      expect(results.filter((r) => r.headers['idempotent-replayed'] === 'true')).toHaveLength(7);
    });
  });

  describe('validation: a 400 naming the field, and nothing written', () => {
    it.each([
      ['payment.amount differs from order.totalAmount', { payment: { amount: 100 } }, 'payment.amount'],
      ['a decimal amount', { order: { totalAmount: '10.50' } }, 'order.totalAmount'],
      ['instalments with method 1', { payment: { numberOfPayments: 3 } }, 'payment.numberOfPayments'],
      ['a bad currency', { payment: { currency: 'BRL' } }, 'payment.currency'],
      ['a Luhn-invalid card', { payment: { cardNumber: '4111111111111112' } }, 'payment.cardNumber'],
      ['a bad e-mail', { billing: { email: 'x' } }, 'billing.email'],
      ['a urlReturn with credentials', { urlReturn: 'https://user:pass@merchant.example/' }, 'urlReturn'],
    ])('rejects %s', async (_name, over: Json, parameter) => {
      const base = saleBody(SANDBOX_CARDS[1], 150000);
      const body = {
        ...base,
        ...over,
        order: { ...base.order, ...over.order },
        payment: { ...base.payment, ...over.payment },
        billing: { ...base.billing, ...over.billing },
      };
      const before = (await receiver(shop, 'report', { reference: base.order.reference })).status;
      const res = await receiver(shop, 'sale', body);
      expect(res.status).toBe(400);
      expect(res.json.result.error.errors.map((e: Json) => e.parameter)).toContain(parameter);
      expect(before).toBe(404);
      expect((await receiver(shop, 'report', { reference: base.order.reference })).status).toBe(404);
    });
  });

  it('documents /v1/receiver in the OpenAPI document', async () => {
    const doc = (await (await fetch(`${stack.baseUrl}/docs-json`)).json()) as Json;
    expect(Object.keys(doc.paths)).toContain('/v1/receiver');
  });
});
