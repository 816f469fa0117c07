import { Client } from 'pg';
import { createMerchant, MerchantCredentials, post, Stack, startStack } from '../support/stack';
import { CANARY_CARDS, CANARY_CODES, SANDBOX_CARDS } from '../fixtures/cards';

jest.setTimeout(180_000);

// eslint-disable-next-line @typescript-eslint/no-explicit-any
type Json = Record<string, any>;

/**
 * Issue 13, "no 5xx from any body": the bodies a probe answered with a 500 or 503 are 400s naming
 * the field, and nothing of them is written.
 */
describe('hostile bodies', () => {
  let stack: Stack;
  let hostile: MerchantCredentials;
  let db: Client;

  const envelope = (m: MerchantCredentials, op: string, body: unknown) => ({
    'transaction-request': { version: '1.0.0', verification: { merchantId: m.merchantId, merchantKey: m.merchantKey }, [op]: body },
  });
  const saleBody = (over: Json = {}) => ({
    order: { reference: 'H-1', totalAmount: 1000 },
    payment: {
      acquirer: 26,
      method: 1,
      amount: 1000,
      currency: '986',
      country: 'BRA',
      numberOfPayments: 1,
      flag: 'visa',
      cardHolder: 'MARIA SILVA',
      cardNumber: SANDBOX_CARDS[1],
      cardSecurityCode: CANARY_CODES[0],
      cardExpirationDate: '203012',
    },
    billing: { name: 'Maria', email: 'maria@example.com', state: 'SP', postalCode: '01310100', country: 'BRA', phone: '11999990000' },
    ...over,
  });
  const tokencard = (billing: Json) => ({
    cardNumber: CANARY_CARDS.visa,
    cardHolder: 'MARIA SILVA',
    cardExpirationDate: '203012',
    cardSecurityCode: CANARY_CODES[1],
    flag: 'visa',
    billing,
  });
  /** Sends bytes as they are: fetch would turn a lone surrogate of a JS string into U+FFFD. */
  const sendRaw = async (path: string, body: Uint8Array, headers: Record<string, string> = {}) => {
    const res = await fetch(stack.baseUrl + path, { method: 'POST', headers: { 'content-type': 'application/json', ...headers }, body });
    const text = await res.text();
    return { status: res.status, headers: Object.fromEntries(res.headers.entries()), text, json: JSON.parse(text) };
  };
  const rowsOf = async (m: MerchantCredentials) => {
    const count = async (table: string) =>
      Number((await db.query(`SELECT count(*)::int AS n FROM ${table} WHERE merchant_id = $1`, [m.internalId])).rows[0].n);
    return {
      transactions: await count('transactions'),
      token_cards: await count('vault.token_cards'),
      idempotency_keys: await count('idempotency_keys'),
    };
  };
  // eslint-disable-next-line @typescript-eslint/no-explicit-any
  const expect400 = (res: { status: number; json: any; text: string }, parameter: string) => {
    expect(res.status).toBe(400);
    expect(res.json.result.error).toMatchObject({ code: '904', parameter });
    expect(res.json.result.error.details).toMatch(/\.$/);
    expect(res.text).not.toContain(SANDBOX_CARDS[1]);
    expect(res.text).not.toContain(CANARY_CARDS.visa);
  };

  beforeAll(async () => {
    stack = await startStack();
    hostile = await createMerchant('hostile bodies shop');
    db = new Client({ connectionString: process.env.DATABASE_URL });
    await db.connect();
  });

  afterAll(async () => {
    await db?.end();
    await stack?.stop();
  });

  describe.each([
    ['NUL', 'a\u0000b'],
    ['a lone surrogate', 'a\ud800b'],
  ])('%s', (_name, bad) => {
    it.each(['sale', 'authorize'])('in order.reference of a %s', async (op) => {
      expect400(
        await post(stack.baseUrl, '/v1/receiver', envelope(hostile, op, saleBody({ order: { reference: bad, totalAmount: 1000 } }))),
        'order.reference',
      );
    });

    it.each(['name', 'email', 'state', 'postalCode', 'country', 'phone'])('in billing.%s of a sale', async (field) => {
      const body = saleBody();
      expect400(
        await post(stack.baseUrl, '/v1/receiver', envelope(hostile, 'sale', { ...body, billing: { ...body.billing, [field]: bad } })),
        `billing.${field}`,
      );
    });

    it('in a report by reference', async () => {
      expect400(await post(stack.baseUrl, '/v1/receiver', envelope(hostile, 'report', { reference: bad })), 'reference');
    });

    it.each(['name', 'email', 'phone'])('in tokencard.billing.%s', async (field) => {
      expect400(
        await post(stack.baseUrl, '/v1/token/add', envelope(hostile, 'tokencard', tokencard({ name: 'Maria', [field]: bad }))),
        `billing.${field}`,
      );
    });

    it('in the merchant id', async () => {
      expect400(
        await post(stack.baseUrl, '/v1/receiver', envelope({ ...hostile, merchantId: bad }, 'sale', saleBody())),
        'verification.merchantId',
      );
    });
  });

  it('refuses a body nested 10 000 levels deep sent with an Idempotency-Key', async () => {
    const text = JSON.stringify(envelope(hostile, 'sale', saleBody({ metadata: '@DEEP@' }))).replace(
      '"@DEEP@"',
      '['.repeat(10_000) + ']'.repeat(10_000),
    );
    const res = await sendRaw('/v1/receiver', Buffer.from(text), { 'idempotency-key': 'deep-1' });
    // root, transaction-request, sale, then 13 arrays: the 14th is level 17.
    expect400(res, `metadata${'[0]'.repeat(13)}`);
  });

  it('refuses 9007199254740993 as a reference instead of storing 9007199254740992', async () => {
    const text = JSON.stringify(envelope(hostile, 'sale', saleBody({ order: { reference: '@BIG@', totalAmount: 1000 } }))).replace(
      '"@BIG@"',
      '9007199254740993',
    );
    expect400(await sendRaw('/v1/receiver', Buffer.from(text)), 'order.reference');
  });

  it('refuses invalid UTF-8 instead of storing U+FFFD', async () => {
    const [head, tail] = JSON.stringify(envelope(hostile, 'sale', saleBody({ order: { reference: '@BAD@', totalAmount: 1000 } }))).split(
      '@BAD@',
    );
    expect400(
      await sendRaw('/v1/receiver', Buffer.concat([Buffer.from(head), Buffer.from([0x52, 0xff, 0xfe]), Buffer.from(tail)])),
      'order.reference',
    );
    const [tHead, tTail] = JSON.stringify(envelope(hostile, 'tokencard', tokencard({ name: '@BAD@' }))).split('@BAD@');
    expect400(
      await sendRaw('/v1/token/add', Buffer.concat([Buffer.from(tHead), Buffer.from([0xc0, 0xaf]), Buffer.from(tTail)])),
      'billing.name',
    );
  });

  it('refuses prototype-poisoning member names', async () => {
    const text = JSON.stringify(envelope(hostile, 'sale', saleBody())).replace('"billing":{', '"billing":{"__proto__":{"admin":true},');
    expect400(await sendRaw('/v1/receiver', Buffer.from(text)), 'billing.__proto__');
  });

  it('wrote nothing for any of them, and logged no unhandled error', async () => {
    expect(await rowsOf(hostile)).toEqual({ transactions: 0, token_cards: 0, idempotency_keys: 0 });
    expect(stack.logOf('api')).not.toMatch(/unhandled error/);
  });

  it('still takes a clean sale, and an Idempotency-Key replay is judged on the JSON, not its whitespace', async () => {
    const clean = await createMerchant('hostile bodies clean shop');
    const text = JSON.stringify(envelope(clean, 'sale', saleBody({ order: { reference: 'Ünïcode 😀 ref', totalAmount: 1000 } })));
    const first = await sendRaw('/v1/receiver', Buffer.from(text), { 'idempotency-key': 'clean-1' });
    expect(first.status).toBe(200);
    expect(first.json.status).toBe('8');
    const again = await sendRaw('/v1/receiver', Buffer.from(text), { 'idempotency-key': 'clean-1' });
    expect(again.json.transactionId).toBe(first.json.transactionId);
    // The same document with other whitespace is the same request.
    const respaced = await sendRaw('/v1/receiver', Buffer.from(` ${text}\n`), { 'idempotency-key': 'clean-1' });
    expect([respaced.status, respaced.headers['idempotent-replayed'], respaced.json.transactionId]).toEqual([
      200,
      'true',
      first.json.transactionId,
    ]);
    const stored = await db.query('SELECT reference FROM transactions WHERE merchant_id = $1', [clean.internalId]);
    expect(stored.rows).toEqual([{ reference: 'Ünïcode 😀 ref' }]);
  });
});
