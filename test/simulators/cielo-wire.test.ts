/**
 * The Cielo simulator on the wire, with plain fetch: its validation errors (Cielo's codes and
 * messages), credentials, unknown sales, the queries, capture and void rules, and what each fault
 * mode leaves in `/__sim/ledger`. Run after `npm run build` (it starts dist/…/main.js).
 */
import { MERCHANT_ID, MERCHANT_KEY, OTHER_MERCHANT_ID, RunningSimulator, startCieloSimulator } from './cielo-process';

// eslint-disable-next-line @typescript-eslint/no-explicit-any
type Json = any;

const SPACING_MS = 300;
let sim: RunningSimulator;

beforeAll(async () => {
  sim = await startCieloSimulator(['--void-spacing-ms', String(SPACING_MS)]);
});
afterAll(() => sim?.stop());
beforeEach(() => fetch(`${sim.url}/__sim/ledger`, { method: 'DELETE' }));

const creds = (merchantId = MERCHANT_ID, key = MERCHANT_KEY) => ({ MerchantId: merchantId, MerchantKey: key });

async function call(method: string, path: string, body?: unknown, headers: Record<string, string> = creds(), signal?: AbortSignal) {
  const raw = typeof body === 'string' ? body : body === undefined ? undefined : JSON.stringify(body);
  const res = await fetch(`${sim.url}${path}`, { method, headers: { 'Content-Type': 'application/json', ...headers }, body: raw, signal });
  const text = await res.text();
  return { status: res.status, text, body: text ? JSON.parse(text) : undefined };
}

let seq = 0;
function saleBody(overrides: { card?: Json; payment?: Json; root?: Json } = {}): Json {
  return {
    MerchantOrderId: `wire${Date.now()}${seq++}`,
    Customer: { Name: 'Comprador Teste' },
    Payment: {
      Type: 'CreditCard',
      Amount: 10000,
      Installments: 1,
      Capture: false,
      CreditCard: {
        CardNumber: '4551870000000181',
        Holder: 'Teste Holder',
        ExpirationDate: '12/2030',
        SecurityCode: '123',
        Brand: 'Visa',
        ...overrides.card,
      },
      ...overrides.payment,
    },
    ...overrides.root,
  };
}

const create = (body: Json = saleBody(), headers?: Record<string, string>) => call('POST', '/1/sales/', body, headers);
const ledger = async (): Promise<Json[]> => ((await (await fetch(`${sim.url}/__sim/ledger`)).json()) as Json).sales;
const fault = (f: Json) => fetch(`${sim.url}/__sim/faults`, { method: 'POST', body: JSON.stringify(f) });
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

describe('validation: 400 with a JSON array of {Code, Message}, nothing done', () => {
  const cases: [string, Json, number, string][] = [
    ['empty body', '', 184, 'Request could not be empty'],
    ['malformed JSON', '{"MerchantOrderId":', 184, 'Request could not be empty'],
    ['no MerchantOrderId', saleBody({ root: { MerchantOrderId: undefined } }), 122, 'MerchantOrderId is required'],
    ['MerchantOrderId over 50', saleBody({ root: { MerchantOrderId: 'x'.repeat(51) } }), 122, 'MerchantOrderId is required'],
    ['no Customer', saleBody({ root: { Customer: undefined } }), 121, 'Customer is required'],
    ['no Payment', saleBody({ root: { Payment: undefined } }), 119, 'At least one Payment is required'],
    ['Amount 0', saleBody({ payment: { Amount: 0 } }), 108, 'Amount must be greater or equal to zero'],
    ['Amount with cents as a fraction', saleBody({ payment: { Amount: 10.5 } }), 108, 'Amount must be greater or equal to zero'],
    ['Installments 0', saleBody({ payment: { Installments: 0 } }), 123, 'Installments must be greater or equal to one'],
    ['no Payment.Type', saleBody({ payment: { Type: undefined } }), 102, 'Payment Type is required'],
    ['a payment type the merchant lacks', saleBody({ payment: { Type: 'Boleto' } }), 129, 'Affiliation not found'],
    ['no CreditCard', saleBody({ payment: { CreditCard: undefined } }), 124, 'Credit Card is Required'],
    ['no CardNumber', saleBody({ card: { CardNumber: undefined } }), 118, 'Credit Card Number is required'],
    ['CardNumber with letters', saleBody({ card: { CardNumber: '4551abcd00000181' } }), 213, 'Credit Card Number is invalid'],
    ['CardNumber of 20 digits', saleBody({ card: { CardNumber: '45518700000001810001' } }), 128, 'Card Number length exceeded'],
    ['no Holder', saleBody({ card: { Holder: undefined } }), 117, 'Credit Card Holder is required'],
    ['no ExpirationDate', saleBody({ card: { ExpirationDate: undefined } }), 125, 'Credit Card Expiration Date is required'],
    ['ExpirationDate MM/YY', saleBody({ card: { ExpirationDate: '12/30' } }), 126, 'Credit Card Expiration Date is invalid'],
    ['ExpirationDate month 13', saleBody({ card: { ExpirationDate: '13/2030' } }), 126, 'Credit Card Expiration Date is invalid'],
    ['ExpirationDate in the past', saleBody({ card: { ExpirationDate: '01/2020' } }), 126, 'Credit Card Expiration Date is invalid'],
    ['SecurityCode of 5', saleBody({ card: { SecurityCode: '12345' } }), 146, 'SecurityCode length exceeded'],
    ['no Brand', saleBody({ card: { Brand: undefined } }), 182, 'Brand is required'],
    ['unknown Brand', saleBody({ card: { Brand: 'Cabal' } }), 185, 'Brand is not supported by selected provider'],
  ];
  it.each(cases)('%s → %i', async (_name, body, code, message) => {
    const res = await create(body);
    expect(res.status).toBe(400);
    expect(res.body).toEqual([{ Code: code, Message: message }]);
    expect(await ledger()).toEqual([]);
  });

  it('lists every failed check at once', async () => {
    const res = await create(saleBody({ card: { ExpirationDate: '1/2030', Brand: 'Nope' } }));
    expect(res.body).toEqual([
      { Code: 126, Message: 'Credit Card Expiration Date is invalid' },
      { Code: 185, Message: 'Brand is not supported by selected provider' },
    ]);
  });

  it('reads member names without regard to case (the PHP SDK sends camelCase with nulls)', async () => {
    const body = {
      merchantOrderId: 'camel1',
      customer: { name: 'Fulano', email: null, address: null },
      payment: {
        serviceTaxAmount: null,
        installments: 1,
        interest: null,
        capture: true,
        softDescriptor: '',
        creditCard: { cardNumber: '4551870000000181', holder: 'Fulano', expirationDate: '12/2030', securityCode: '123', brand: 'Visa' },
        type: 'CreditCard',
        amount: 1500,
        links: null,
      },
    };
    const res = await create(body);
    expect(res.status).toBe(201);
    expect(res.body.Payment).toMatchObject({ Status: 2, ReturnCode: '6', CapturedAmount: 1500, Amount: 1500 });
  });
});

describe('credentials', () => {
  it.each([
    ['no headers', {}],
    ['MerchantId not a GUID', creds('not-a-guid')],
    ['no MerchantKey', { MerchantId: MERCHANT_ID }],
  ])('%s → 401 without a body', async (_name, headers) => {
    const res = await create(saleBody(), headers);
    expect(res).toMatchObject({ status: 401, text: '' });
    expect(await ledger()).toEqual([]);
  });

  it('--merchant-id/--merchant-key let only that pair in', async () => {
    const only = await startCieloSimulator(['--merchant-id', MERCHANT_ID, '--merchant-key', MERCHANT_KEY]);
    try {
      const post = (headers: Record<string, string>) =>
        fetch(`${only.url}/1/sales/`, {
          method: 'POST',
          headers: { 'Content-Type': 'application/json', ...headers },
          body: JSON.stringify(saleBody()),
        });
      expect((await post(creds(MERCHANT_ID, 'wrong'))).status).toBe(401);
      expect((await post(creds(OTHER_MERCHANT_ID, MERCHANT_KEY))).status).toBe(401);
      expect((await post(creds())).status).toBe(201);
    } finally {
      await only.stop();
    }
  });

  it("keeps each merchant's books apart: another merchant sees 404", async () => {
    const { body } = await create();
    const paymentId = body.PaymentId ?? body.Payment.PaymentId;
    const other = creds(OTHER_MERCHANT_ID, 'other-key');
    expect((await call('GET', `/1/sales/${paymentId}`, undefined, other)).status).toBe(404);
    expect((await call('PUT', `/1/sales/${paymentId}/void`, undefined, other)).status).toBe(404);
    expect((await call('GET', `/1/sales?merchantOrderId=${body.MerchantOrderId}`, undefined, other)).status).toBe(404);
    expect((await ledger())[0]).toMatchObject({ merchantId: MERCHANT_ID, status: 1 });
  });
});

describe('queries', () => {
  it('GET an unknown PaymentId, capture or void it → 404', async () => {
    const id = '00000000-0000-4000-8000-000000000000';
    expect((await call('GET', `/1/sales/${id}`)).status).toBe(404);
    expect((await call('PUT', `/1/sales/${id}/capture`)).status).toBe(404);
    expect((await call('PUT', `/1/sales/${id}/void`)).status).toBe(404);
  });

  it('by merchantOrderId: every sale of the order (Cielo does not refuse a repeated one), 404 when none', async () => {
    const first = (await create(saleBody({ root: { MerchantOrderId: 'order77' } }))).body.Payment;
    const second = (await create(saleBody({ root: { MerchantOrderId: 'order77' } }))).body.Payment;
    const res = await call('GET', '/1/sales?merchantOrderId=order77');
    expect(res.status).toBe(200);
    expect(res.body).toEqual({
      ReasonCode: 0,
      ReasonMessage: 'Successful',
      Payments: [
        { PaymentId: first.PaymentId, ReceveidDate: expect.stringMatching(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}$/) },
        { PaymentId: second.PaymentId, ReceveidDate: expect.any(String) },
      ],
    });
    expect(await call('GET', '/1/sales?merchantOrderId=nosuchorder')).toMatchObject({ status: 404, text: '' });
  });

  it('by acquirer Tid, and by PaymentId with the amounts and dates', async () => {
    const longOrderId = crypto.randomUUID().replace(/-/g, ''); // over 20 characters: Cielo adds its own AcquirerOrderId
    const sale = (await create(saleBody({ payment: { Capture: true }, root: { MerchantOrderId: longOrderId } }))).body;
    const byTid = await call('GET', `/1/sales/acquirerTid/${sale.Payment.Tid}`);
    expect(byTid.body.Payment.PaymentId).toBe(sale.Payment.PaymentId);
    const byId = await call('GET', `/1/sales/${sale.Payment.PaymentId}`);
    expect(byId.body).toMatchObject({
      MerchantOrderId: sale.MerchantOrderId,
      AcquirerOrderId: expect.stringMatching(/^\d{14}[0-9A-F]{6}$/),
    });
    expect(byId.body.Payment).toMatchObject({
      Status: 2,
      CapturedAmount: 10000,
      CapturedDate: expect.stringMatching(/^\d{4}-\d\d-\d\d \d\d:\d\d:\d\d$/),
    });
    expect(byId.body.Payment.CreditCard).toEqual({
      CardNumber: '455187******0181',
      Holder: 'Teste Holder',
      ExpirationDate: '12/2030',
      SaveCard: false,
      Brand: 'Visa',
    });
    expect(byId.text).not.toContain('4551870000000181');
    expect(byId.text).not.toContain('SecurityCode');
  });
});

describe('outcome by the card number last digit (Cielo sandbox)', () => {
  it.each([
    ['0', 1, '4', 'Operation Successful'],
    ['1', 1, '4', 'Operation Successful'],
    ['4', 1, '4', 'Operation Successful'],
    ['2', 3, '05', 'Not Authorized'],
    ['3', 3, '57', 'Expired Card'],
    ['5', 3, '78', 'Blocked Card'],
    ['6', 3, '99', 'Time Out'],
    ['7', 3, '77', 'Canceled Card'],
    ['8', 3, '70', 'Problems with the Credit Card'],
  ])('ending %s → Status %i, ReturnCode %s', async (digit, status, code, message) => {
    const res = await create(saleBody({ card: { CardNumber: `455187000000018${digit}` } }));
    expect(res.status).toBe(201);
    expect(res.body.Payment).toMatchObject({ Status: status, ReturnCode: code, ReturnMessage: message });
    expect('AuthorizationCode' in res.body.Payment).toBe(status === 1);
  });

  it('ending 9: authorized or time out, the same on every query of that sale', async () => {
    const res = await create(saleBody({ card: { CardNumber: '4551870000000189' } }));
    expect([1, 3]).toContain(res.body.Payment.Status);
    const again = await call('GET', `/1/sales/${res.body.Payment.PaymentId}`);
    expect(again.body.Payment.Status).toBe(res.body.Payment.Status);
  });
});

describe('capture and void', () => {
  it('captures in part once; a second capture and an amount above the authorization → 308', async () => {
    const id = (await create()).body.Payment.PaymentId;
    expect((await call('PUT', `/1/sales/${id}/capture?amount=20000`)).body).toEqual([
      { Code: 308, Message: 'Transaction not available to capture' },
    ]);
    const captured = await call('PUT', `/1/sales/${id}/capture?amount=4000`);
    expect(captured.status).toBe(200);
    expect(captured.body).toMatchObject({
      Status: 2,
      ReasonCode: 0,
      ReasonMessage: 'Successful',
      ProviderReturnCode: '6',
      ReturnCode: '6',
    });
    expect(captured.body.Links.map((l: Json) => `${l.Method} ${l.Rel}`)).toEqual(['GET self', 'PUT void']);
    expect((await call('PUT', `/1/sales/${id}/capture`)).body).toEqual([{ Code: 308, Message: 'Transaction not available to capture' }]);
    expect((await ledger())[0]).toMatchObject({ status: 2, capturedAmount: 4000 });
  });

  it('voids a capture in parts, Cielo-spaced, then the rest → 10; a void too soon, too large or of nothing left → 309', async () => {
    const id = (await create(saleBody({ payment: { Capture: true } }))).body.Payment.PaymentId;
    const part = await call('PUT', `/1/sales/${id}/void?amount=3000`);
    expect(part.body).toMatchObject({ Status: 2, ReturnCode: '0', ProviderReturnCode: '0', ProviderReturnMessage: 'Operation Successful' });
    expect((await call('PUT', `/1/sales/${id}/void?amount=1000`)).body).toEqual([
      { Code: 309, Message: 'Transaction not available to void' },
    ]);
    await sleep(SPACING_MS + 50);
    expect((await call('PUT', `/1/sales/${id}/void?amount=8000`)).body).toEqual([
      { Code: 309, Message: 'Transaction not available to void' },
    ]);
    const rest = await call('PUT', `/1/sales/${id}/void`);
    expect(rest.body).toMatchObject({ Status: 10, ReturnCode: '9' });
    await sleep(SPACING_MS + 50);
    expect((await call('PUT', `/1/sales/${id}/void`)).status).toBe(400);
    const q = (await call('GET', `/1/sales/${id}`)).body.Payment;
    expect(q).toMatchObject({ Status: 10, CapturedAmount: 10000, VoidedAmount: 10000 });
    expect((await ledger())[0].operations.map((o: Json) => o.kind)).toEqual(['authorize', 'capture', 'void', 'void']);
  });

  it('voids an authorization only whole: a part of it → 309, the whole → 10', async () => {
    const id = (await create()).body.Payment.PaymentId;
    expect((await call('PUT', `/1/sales/${id}/void?amount=100`)).status).toBe(400);
    expect((await call('PUT', `/1/sales/${id}/void?amount=10000`)).body).toMatchObject({ Status: 10, ReturnCode: '9' });
    expect((await ledger())[0]).toMatchObject({ status: 10, capturedAmount: 0, voidedAmount: 10000 });
  });

  it('refuses to capture or void a declined sale', async () => {
    const id = (await create(saleBody({ card: { CardNumber: '4551870000000182' } }))).body.Payment.PaymentId;
    expect((await call('PUT', `/1/sales/${id}/capture`)).body[0].Code).toBe(308);
    expect((await call('PUT', `/1/sales/${id}/void`)).body[0].Code).toBe(309);
  });
});

describe('fault modes and the ledger', () => {
  it('hang: the sale is made, the answer never comes', async () => {
    await fault({ mode: 'hang', match: 'POST /1/sales' });
    const body = saleBody();
    await expect(call('POST', '/1/sales/', body, creds(), AbortSignal.timeout(300))).rejects.toThrow();
    expect(await ledger()).toEqual([expect.objectContaining({ merchantOrderId: body.MerchantOrderId, status: 1 })]);
    expect((await call('GET', `/1/sales?merchantOrderId=${body.MerchantOrderId}`)).status).toBe(200);
  });

  it('refuse-5xx: 503 and nothing done', async () => {
    await fault({ mode: 'refuse-5xx' });
    expect((await create()).status).toBe(503);
    expect(await ledger()).toEqual([]);
  });

  it('act-then-5xx: 500, yet the sale (or the capture) is made', async () => {
    await fault({ mode: 'act-then-5xx', match: 'POST /1/sales' });
    expect((await create()).status).toBe(500);
    const [sale] = await ledger();
    expect(sale).toMatchObject({ status: 1 });
    await fault({ mode: 'act-then-5xx', match: 'PUT /1/sales/' });
    expect((await call('PUT', `/1/sales/${sale.paymentId}/capture`)).status).toBe(500);
    expect((await ledger())[0]).toMatchObject({ status: 2, capturedAmount: 10000 });
  });

  it('slow: waits, then acts and answers', async () => {
    await fault({ mode: 'slow', delayMs: 250 });
    const t0 = Date.now();
    expect((await create()).status).toBe(201);
    expect(Date.now() - t0).toBeGreaterThanOrEqual(240);
    expect(await ledger()).toHaveLength(1);
  });

  it.each([
    ['status-0', 0],
    ['status-12', 12],
  ])('%s: the create answers Status %i without a return; queries show how the sale ended', async (mode, status) => {
    await fault({ mode, match: 'POST /1/sales' });
    const res = await create(saleBody({ payment: { Capture: true } }));
    expect(res.status).toBe(201);
    expect(res.body.Payment.Status).toBe(status);
    expect(res.body.Payment.ReturnCode).toBeUndefined();
    expect(res.body.Payment.AuthorizationCode).toBeUndefined();
    const q = await call('GET', `/1/sales/${res.body.Payment.PaymentId}`);
    expect(q.body.Payment).toMatchObject({ Status: 2, ReturnCode: '6', CapturedAmount: 10000 });
    expect(await ledger()).toEqual([expect.objectContaining({ status: 2, capturedAmount: 10000 })]);
  });
});
