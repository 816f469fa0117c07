import { readFileSync } from 'node:fs';
import { createMerchant, eventually, post, runCli, startStack, Stack } from '../support/stack';
import { Client } from 'pg';
import { CANARY_CARDS, CANARY_CODES, SANDBOX_CARDS } from '../fixtures/cards';

jest.setTimeout(120_000);

async function waitFor(check: () => boolean, timeoutMs = 10_000): Promise<void> {
  const until = Date.now() + timeoutMs;
  while (!check()) {
    if (Date.now() > until) throw new Error('condition not met in time');
    await new Promise((r) => setTimeout(r, 100));
  }
}

interface Merchant {
  merchantId: string;
  merchantKey: string;
}

function envelope(m: Merchant, op: string, body: unknown) {
  return {
    'transaction-request': { version: '1.0.0', verification: { merchantId: m.merchantId, merchantKey: m.merchantKey }, [op]: body },
  };
}

const card = (over: Record<string, unknown> = {}) => ({
  cardNumber: CANARY_CARDS.visa,
  cardHolder: 'MARIA SILVA',
  cardExpirationDate: '203012',
  cardSecurityCode: CANARY_CODES[0],
  flag: 'visa',
  billing: { name: 'Maria Silva', email: 'maria@example.com', state: 'SP', postalCode: '01310100', country: 'BRA', phone: '11999990000' },
  ...over,
});

describe('tokenization end to end (api → queue → tokenizer → Postgres)', () => {
  let stack: Stack;
  let shop: Merchant;
  let other: Merchant;
  const add = (m: Merchant, body: unknown, op = 'tokencard') => post(stack.baseUrl, '/v1/token/add', envelope(m, op, body));
  const retrieve = (m: Merchant, token: string, key = 'token') =>
    post(stack.baseUrl, '/v1/token/retrieve', envelope(m, 'retrieve-token', { [key]: token }));

  beforeAll(async () => {
    stack = await startStack({ LOG_LEVEL: 'debug', MERCHANT_CACHE_MS: '200' });
    shop = await createMerchant('e2e shop');
    other = await createMerchant('e2e other shop');
  });

  afterAll(async () => {
    await stack?.stop();
  });

  it('vaults a card and answers the TokenResponse with only masked data', async () => {
    const res = await add(shop, card());
    expect(res.status).toBe(200);
    expect(res.json).toEqual({
      TokenCard: expect.stringMatching(/^[0-9a-f]{64}$/),
      BIN: '411111******1111',
      CardHolder: 'MARIA SILVA',
      Month: '12',
      Year: '2030',
      Flag: 'visa',
      Created_at: expect.stringMatching(/^\d{10}$/),
      Client: {
        name: 'Maria Silva',
        email: 'maria@example.com',
        state: 'SP',
        postalCode: '01310100',
        country: 'BRA',
        phone: '11999990000',
      },
    });
    expect(JSON.stringify(res.json)).not.toContain(CANARY_CARDS.visa);
  });

  it('gives the same token for the same card and expiry, a new one for another expiry', async () => {
    const first = await add(shop, card({ cardNumber: CANARY_CARDS.mastercard, flag: 'mastercard' }));
    const again = await add(shop, card({ cardNumber: CANARY_CARDS.mastercard, flag: 'mastercard', cardHolder: 'OTHER NAME' }), 'tokenCard');
    const otherExpiry = await add(shop, card({ cardNumber: CANARY_CARDS.mastercard, flag: 'mastercard', cardExpirationDate: '203111' }));
    expect(first.status).toBe(200);
    expect(again.json.TokenCard).toBe(first.json.TokenCard);
    expect(otherExpiry.json.TokenCard).not.toBe(first.json.TokenCard);
  });

  it('accepts every scalar as a JSON number too (liberal input)', async () => {
    const res = await add(shop, card({ cardNumber: Number(CANARY_CARDS.visa2), cardExpirationDate: 203012, cardSecurityCode: undefined }));
    expect(res.status).toBe(200);
    expect(res.json.BIN).toBe('401288******1881');
  });

  it('retrieves a token by either key and hides it from every other merchant', async () => {
    const { json } = await add(shop, card({ cardNumber: CANARY_CARDS.amex, flag: 'amex', cardSecurityCode: CANARY_CODES[1] }));
    const mine = await retrieve(shop, json.TokenCard);
    expect(mine.status).toBe(200);
    expect(mine.json).toEqual(json);
    expect((await retrieve(shop, json.TokenCard, 'tokenCard')).json).toEqual(json);

    const theirs = await retrieve(other, json.TokenCard);
    const missing = await retrieve(shop, 'f'.repeat(64));
    expect(theirs.status).toBe(404);
    expect(missing.status).toBe(404);
    // Exactly alike: another merchant's token can't be told from a missing one.
    expect(theirs.json).toEqual(missing.json);
    expect(theirs.json.result.error.code).toBe('040');

    // Read together (one statement for the batch): a shorter token is as missing as an unknown
    // one and takes no real read down with it; the token's hex in capitals is the token.
    const reads = await Promise.all(['f', json.TokenCard, 'f'.repeat(63), json.TokenCard.toUpperCase()].map((t) => retrieve(shop, t)));
    expect(reads.map((r) => r.status)).toEqual([404, 200, 404, 200]);
    for (const r of [reads[0], reads[2]]) expect(r.json).toEqual(missing.json);
    for (const r of [reads[1], reads[3]]) expect(r.json).toEqual(json);
  });

  it('scopes dedup per merchant: the same card at another merchant is another token', async () => {
    const a = await add(shop, card({ cardNumber: CANARY_CARDS.elo, flag: 'elo' }));
    const b = await add(other, card({ cardNumber: CANARY_CARDS.elo, flag: 'elo' }));
    expect(a.status).toBe(200);
    expect(b.status).toBe(200);
    expect(a.json.TokenCard).not.toBe(b.json.TokenCard);
  });

  it('turns 50 concurrent adds of one card into one token', async () => {
    const results = await Promise.all(
      Array.from({ length: 50 }, () => add(shop, card({ cardNumber: CANARY_CARDS.concurrent, cardSecurityCode: CANARY_CODES[2] }))),
    );
    expect(results.map((r) => r.status)).toEqual(Array(50).fill(200));
    expect(new Set(results.map((r) => r.json.TokenCard)).size).toBe(1);
  });

  it('honours Idempotency-Key on add and retrieve: the same key and body replay the first answer, another body is a 409', async () => {
    const key = `tok-${Date.now()}`;
    const body = envelope(shop, 'tokencard', card({ cardNumber: CANARY_CARDS.mastercard, flag: 'mastercard' }));
    const first = await post(stack.baseUrl, '/v1/token/add', body, { 'Idempotency-Key': key });
    const again = await post(stack.baseUrl, '/v1/token/add', body, { 'Idempotency-Key': key });
    expect(first.status).toBe(200);
    expect(first.headers['idempotent-replayed']).toBeUndefined();
    expect([again.status, again.headers['idempotent-replayed'], again.json]).toEqual([200, 'true', first.json]);
    const changed = await post(stack.baseUrl, '/v1/token/add', envelope(shop, 'tokencard', card({ cardExpirationDate: '203111' })), {
      'Idempotency-Key': key,
    });
    expect([changed.status, changed.json.result.error.code]).toEqual([409, '409']);

    const read = envelope(shop, 'retrieve-token', { token: first.json.TokenCard });
    const r1 = await post(stack.baseUrl, '/v1/token/retrieve', read, { 'Idempotency-Key': `${key}-r` });
    const r2 = await post(stack.baseUrl, '/v1/token/retrieve', read, { 'Idempotency-Key': `${key}-r` });
    expect([r1.status, r2.status, r2.headers['idempotent-replayed'], r2.json]).toEqual([200, 200, 'true', r1.json]);
    const bad = await post(stack.baseUrl, '/v1/token/retrieve', read, { 'Idempotency-Key': 'has space' });
    expect([bad.status, bad.json.result.error.parameter]).toEqual([400, 'Idempotency-Key']);
  });

  describe('validation: a 400 naming the field, and nothing stored', () => {
    const cases: [string, Record<string, unknown>, string, string][] = [
      ['a Luhn-invalid number', { cardNumber: '4111111111111112' }, '910', 'cardNumber'],
      ['a too short number', { cardNumber: '41111111111' }, '910', 'cardNumber'],
      ['a number with letters', { cardNumber: '4111x11111111111' }, '910', 'cardNumber'],
      ['a missing number', { cardNumber: undefined }, '903', 'cardNumber'],
      ['a missing holder', { cardHolder: undefined }, '903', 'cardHolder'],
      ['an expiry in the past', { cardExpirationDate: '202001' }, '911', 'cardExpirationDate'],
      ['an expiry in MMYYYY form', { cardExpirationDate: '122030' }, '904', 'cardExpirationDate'],
      ['a malformed expiry', { cardExpirationDate: '2030-12' }, '904', 'cardExpirationDate'],
      ['a 2-digit security code', { cardSecurityCode: '12' }, '913', 'cardSecurityCode'],
      ['a flag of another brand', { flag: 'mastercard' }, '912', 'flag'],
      ['an unknown flag', { flag: 'nosuchbrand' }, '904', 'flag'],
      ['a bad billing e-mail', { billing: { email: 'not-an-email' } }, '904', 'billing.email'],
      ['a bad billing state', { billing: { state: 'São Paulo' } }, '904', 'billing.state'],
      ['a billing phone with symbols', { billing: { phone: '+55 11 9999' } }, '904', 'billing.phone'],
    ];
    it.each(cases)('rejects %s', async (_name, over, code, parameter) => {
      const res = await add(shop, card({ cardSecurityCode: CANARY_CODES[3], ...over }));
      expect(res.status).toBe(400);
      expect(res.json.result.error).toMatchObject({ code, parameter });
      expect(res.json.result.error.details).toMatch(/\.$/);
      expect(JSON.stringify(res.json)).not.toMatch(/4111111111111|0917|083/);
    });

    it('rejects a bad envelope, a wrong version and two operations', async () => {
      const raw = (body: unknown) => post(stack.baseUrl, '/v1/token/add', body);
      expect((await raw({ foo: 1 })).json.result.error).toMatchObject({ code: '901', parameter: 'transaction-request' });
      const wrongVersion = envelope(shop, 'tokencard', card());
      wrongVersion['transaction-request'].version = '2.0';
      expect((await raw(wrongVersion)).json.result.error).toMatchObject({ code: '902', parameter: 'version' });
      const two = envelope(shop, 'tokencard', card()) as Record<string, Record<string, unknown>>;
      two['transaction-request'].tokenCard = card();
      expect((await raw(two)).status).toBe(400);
    });

    it('answers 415 to another content type, 400 to broken JSON, 413 past 64 KiB, and accepts a trailing slash', async () => {
      const send = (body: string, type = 'application/json; charset=utf-8', path = '/v1/token/add') =>
        fetch(stack.baseUrl + path, { method: 'POST', headers: { 'content-type': type }, body });
      const wrongType = await send('x=1', 'application/x-www-form-urlencoded');
      expect(wrongType.status).toBe(415);
      // eslint-disable-next-line @typescript-eslint/no-explicit-any
      expect(((await wrongType.json()) as any).result.error.code).toBe('415');
      const broken = await send(`{"transaction-request": {"tokencard": {"cardNumber": "${CANARY_CARDS.visa}"`);
      expect(broken.status).toBe(400);
      const brokenBody = await broken.text();
      expect(brokenBody).not.toContain(CANARY_CARDS.visa);
      expect(JSON.parse(brokenBody).result.error.code).toBe('900');
      const big = await send(JSON.stringify({ pad: 'x'.repeat(70 * 1024) }));
      expect(big.status).toBe(413);
      const slash = await send(JSON.stringify(envelope(shop, 'tokencard', card())), 'application/json', '/v1/token/add/');
      expect(slash.status).toBe(200);
    });
  });

  describe('authentication', () => {
    it('answers 401 code 010 to a wrong key, an unknown merchant and a malformed id alike', async () => {
      const wrongKey = await add({ ...shop, merchantKey: 'mk_wrong' }, card());
      const unknown = await add({ merchantId: '00000000-0000-4000-8000-000000000000', merchantKey: shop.merchantKey }, card());
      const malformed = await add({ merchantId: 'not-a-uuid', merchantKey: shop.merchantKey }, card());
      for (const res of [wrongKey, unknown, malformed]) {
        expect(res.status).toBe(401);
        expect(res.json.result.error.code).toBe('010');
      }
      expect(wrongKey.json).toEqual(unknown.json);
    });

    it('stops accepting the old key once merchant:rotate-key issued a new one', async () => {
      const m = await createMerchant('rotating shop');
      expect((await add(m, card())).status).toBe(200);
      const rotated = await runCli(['merchant:rotate-key', '--merchant', m.merchantId]);
      expect(rotated).toEqual({ merchantId: m.merchantId, merchantKey: expect.stringMatching(/^mk_/) });
      // The credential cache lives 200 ms in this suite.
      await new Promise((r) => setTimeout(r, 400));
      expect((await add(m, card())).status).toBe(401);
      expect((await add({ merchantId: m.merchantId, merchantKey: rotated.merchantKey as string }, card())).status).toBe(200);
    });
  });

  describe("the api reads a token's facts itself (token_facts), not over the queue", () => {
    const receiver = (m: Merchant, body: unknown, headers: Record<string, string> = {}) =>
      post(stack.baseUrl, '/v1/receiver', envelope(m, 'sale', body), headers);
    const tokenSale = (token: string, reference: string) => ({
      order: { reference, totalAmount: 2500 },
      payment: { acquirer: 26, method: 1, amount: 2500, currency: '986', country: 'BRA', numberOfPayments: 1, tokenCard: token },
    });

    it('answers retrieve and finds a token sale brand with the tokenizer stopped; the charge waits for the tokenizer', async () => {
      const added = await add(shop, card({ cardNumber: SANDBOX_CARDS[1], cardSecurityCode: CANARY_CODES[0] }));
      expect(added.status).toBe(200);
      await stack.tokenizer.stop();
      try {
        // Nothing takes jobs now: an answer can only come from Postgres.
        const started = Date.now();
        const mine = await retrieve(shop, added.json.TokenCard);
        expect(mine.status).toBe(200);
        expect(mine.json).toEqual(added.json);
        expect(Date.now() - started).toBeLessThan(2_000);
        // The sale is recorded with the token's brand and masked number, then waits for the charge.
        const sale = await receiver(shop, tokenSale(added.json.TokenCard, 'FACTS-1'), { prefer: 'respond-async' });
        expect(sale.status).toBe(202);
        expect(sale.json).toMatchObject({ status: '0' });
        const db = new Client({ connectionString: process.env.DATABASE_URL });
        await db.connect();
        try {
          const { rows } = await db.query('SELECT brand, masked_card, status FROM transactions WHERE id = $1', [
            sale.json.transactionId.toLowerCase(),
          ]);
          expect(rows).toEqual([{ brand: 'visa', masked_card: added.json.BIN, status: 0 }]);
        } finally {
          await db.end();
        }
      } finally {
        await stack.restart('tokenizer');
      }
      // The tokenizer back: the charge that waited on the queue is made.
      await eventually(
        async () =>
          expect((await post(stack.baseUrl, '/v1/receiver', envelope(shop, 'report', { reference: 'FACTS-1' }))).json.status).toBe('8'),
        { timeoutMs: 20_000 },
      );
    });

    it("answers another merchant's token and an unknown one alike, for retrieve and for a sale", async () => {
      const { json } = await add(shop, card({ cardNumber: CANARY_CARDS.hipercard, flag: 'hipercard' }));
      const theirs = await retrieve(other, json.TokenCard);
      const missing = await retrieve(other, 'e'.repeat(64));
      expect(theirs.status).toBe(404);
      expect(theirs.json).toEqual(missing.json);
      expect(theirs.json.result.error).toMatchObject({ code: '040', parameter: 'token' });
      const theirSale = await receiver(other, tokenSale(json.TokenCard, 'FACTS-2'));
      const missingSale = await receiver(other, tokenSale('e'.repeat(64), 'FACTS-3'));
      expect(theirSale.status).toBe(404);
      expect(theirSale.json).toEqual(missingSale.json);
    });

    it('projects a vault row whoever writes it (a tokenizer of the release before token_facts), so the api answers it alone', async () => {
      const m = await createMerchant('facts trigger shop');
      const token = 'c'.repeat(64);
      const db = new Client({ connectionString: process.env.DATABASE_URL });
      await db.connect();
      try {
        // A vault row as the previous release's statement wrote it: nothing about token_facts. Its
        // record opens under no key, so it leaves the vault as it found it (the suites share the database).
        await db.query(
          `INSERT INTO vault.token_cards (token, merchant_id, fingerprint, exp_year, exp_month, masked, brand, holder, kek_id, wrapped_key, ciphertext)
           VALUES ($1, $2, 'old-release', 2031, 7, '400000******0002', 'visa', 'OLD RELEASE', 'k0', '\\x00', '\\x00')`,
          [token, m.internalId],
        );
        const res = await retrieve(m, token);
        expect(res.status).toBe(200);
        expect(res.json).toMatchObject({ TokenCard: token, BIN: '400000******0002', CardHolder: 'OLD RELEASE', Month: '07', Year: '2031' });
      } finally {
        await db.query('DELETE FROM token_facts WHERE token = $1', [token]);
        await db.query('DELETE FROM vault.token_cards WHERE token = $1', [token]);
        await db.end();
      }
    });
  });

  describe('operations', () => {
    it('serves /health, /live, /metrics and an OpenAPI document of the token endpoints', async () => {
      const health = await fetch(`${stack.baseUrl}/health`);
      expect(health.status).toBe(200);
      // Liveness: the process only, no dependency (the Kubernetes manifests probe it).
      const live = await fetch(`${stack.baseUrl}/live`);
      expect([live.status, await live.json()]).toEqual([200, { status: 'ok' }]);
      // eslint-disable-next-line @typescript-eslint/no-explicit-any
      expect(((await health.json()) as any).info).toMatchObject({ postgres: { status: 'up' }, redis: { status: 'up' } });
      const metrics = await (await fetch(`${stack.baseUrl}/metrics`)).text();
      expect(metrics).toContain('http_request_duration_seconds');
      // What held the event loop up since the previous scrape, and the GC pauses (docs/decisions/0008-token-facts-read-by-the-api.md).
      expect(metrics).toMatch(/^pause_window_seconds\{source="eventloop",stat="p99",app="api"\} [\d.e-]+$/m);
      expect(metrics).toMatch(/^pause_window_seconds\{source="gc",stat="count",app="api"\} \d+$/m);
      const doc = (await (await fetch(`${stack.baseUrl}/docs-json`)).json()) as { paths: Record<string, unknown> };
      expect(Object.keys(doc.paths)).toEqual(expect.arrayContaining(['/v1/token/add', '/v1/token/retrieve']));
    });

    it('carries the request id into the tokenizer log as the correlation id', async () => {
      // Base 36: a request id with 12 or more digits in a row is replaced (it could hold a card number).
      const requestId = `corr-${Date.now().toString(36)}`;
      const res = await post(stack.baseUrl, '/v1/token/add', envelope(shop, 'tokencard', card()), { 'x-request-id': requestId });
      expect(res.status).toBe(200);
      // The tokenizer logs each job at debug level (the suite boots it with LOG_LEVEL=debug).
      await waitFor(() => readFileSync(stack.apps.tokenizer.logFile, 'utf8').includes(`"correlationId":"${requestId}"`));
    });
  });
});
