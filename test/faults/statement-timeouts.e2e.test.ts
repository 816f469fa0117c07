import { Client } from 'pg';
import { CANARY_CARDS, SANDBOX_CARDS } from '../fixtures/cards';
import { expectReconciled, Json, receiverOf, saleBody } from '../support/money';
import { createMerchant, eventually, HttpResult, MerchantCredentials, post, Stack, startStack } from '../support/stack';

jest.setTimeout(240_000);

/**
 * Bounded statements: Postgres cancels a statement stuck behind a lock (lock_timeout, SQLSTATE
 * 55P03, in the workers; statement_timeout, 57014, in the api, which runs here without a lock
 * timeout). Each request caught by it answers 503 with the wire error body, about as soon as the
 * bound runs out, with nothing half-written; once the lock is gone, the same requests succeed,
 * the batchers and pools having recovered by themselves, and settlement catches up. The bounds
 * come from PGOPTIONS, as a role's ALTER ROLE … SET would set them.
 */
const WORKER_BOUNDS = '-c lock_timeout=300ms -c statement_timeout=1500ms';
const API_BOUNDS = '-c statement_timeout=800ms';
/** The bound plus the round trips of a loaded machine: far below the 8 s the apps wait for a reply. */
const ANSWER_WITHIN_MS = 4_000;

describe('statement and lock timeouts', () => {
  let stack: Stack;
  let shop: MerchantCredentials;
  let db: Client;
  let receiver: ReturnType<typeof receiverOf>;

  // One card: the vault deduplicates by card and expiry, so a new expiry makes a new token.
  const addToken = (holder = 'TIMEOUT CHECK', expiry = '203012') =>
    post(stack.baseUrl, '/v1/token/add', {
      'transaction-request': {
        version: '1.0.0',
        verification: shop,
        tokencard: { cardNumber: CANARY_CARDS.visa, cardHolder: holder, cardExpirationDate: expiry },
      },
    });
  const count = async (sql: string, params: unknown[] = []): Promise<number> => Number((await db.query(sql, params)).rows[0].n);

  /** Runs `during` while a transaction of its own holds what `lockSql` takes; always lets go. */
  async function holding<T>(lockSql: string, params: unknown[], during: () => Promise<T>): Promise<T> {
    const locker = new Client({ connectionString: process.env.DATABASE_URL });
    await locker.connect();
    try {
      await locker.query('BEGIN');
      await locker.query(lockSql, params);
      return await during();
    } finally {
      await locker.query('ROLLBACK').catch(() => undefined);
      await locker.end();
    }
  }

  /** A 503 with the wire error body, answered within the bound (not after a reply timeout). */
  async function expectUnavailable(request: () => Promise<HttpResult>): Promise<HttpResult> {
    const started = Date.now();
    const res = await request();
    const took = Date.now() - started;
    expect({ status: res.status, code: res.json?.result?.error?.code, statusCode: res.json?.status?.code }).toEqual({
      status: 503,
      code: '503',
      statusCode: '503',
    });
    expect(res.json.result.error.action).toMatch(/Retry later/);
    expect(took).toBeLessThan(ANSWER_WITHIN_MS);
    expect(res.text).not.toContain(CANARY_CARDS.visa);
    return res;
  }

  beforeAll(async () => {
    db = new Client({ connectionString: process.env.DATABASE_URL });
    await db.connect();
    stack = await startStack(
      { REPLY_TIMEOUT_MS: '8000', SALE_SYNC_WAIT_MS: '8000', MERCHANT_CACHE_MS: '0' },
      {
        envFor: {
          api: { PGOPTIONS: API_BOUNDS },
          tokenizer: { PGOPTIONS: WORKER_BOUNDS, SALE_ORPHAN_AFTER_S: '2', SALE_RECONCILE_INTERVAL_MS: '500' },
          settlement: { PGOPTIONS: WORKER_BOUNDS },
          notifier: { PGOPTIONS: WORKER_BOUNDS },
        },
      },
    );
    shop = await createMerchant('timeouts shop');
    receiver = receiverOf(stack.baseUrl, shop);
    // Warm: every app has its pool open and its statements prepared before the first lock.
    expect((await addToken()).status).toBe(200);
    expect((await receiver('sale', saleBody(1000))).json).toMatchObject({ status: '8' });
  });

  afterAll(async () => {
    await stack?.stop();
    await db?.end();
  });

  it('a sale whose insert waits on a lock past statement_timeout: 503 (57014), nothing recorded, the same key succeeds after', async () => {
    const body = saleBody(2500);
    const key = `timeout-sale-${Date.now()}`;
    const before = await count('SELECT count(*) AS n FROM sandbox_calls');
    await holding('LOCK TABLE transactions IN ACCESS EXCLUSIVE MODE', [], () =>
      expectUnavailable(() => receiver('sale', body, { 'idempotency-key': key })),
    );
    expect(await count('SELECT count(*) AS n FROM transactions WHERE reference = $1', [body.order.reference])).toBe(0);
    expect(await count('SELECT count(*) AS n FROM idempotency_keys WHERE key = $1', [key])).toBe(0);
    expect(await count('SELECT count(*) AS n FROM sandbox_calls')).toBe(before);
    await stack.api.waitForLog(/"cause":"statement_timeout"/);

    const again = await receiver('sale', body, { 'idempotency-key': key });
    expect(again.status).toBe(200);
    expect(again.json).toMatchObject({ status: '8' });
    expect(await count('SELECT count(*) AS n FROM transactions WHERE reference = $1', [body.order.reference])).toBe(1);
  });

  it('a token add whose vault insert waits past lock_timeout: 503 (55P03), no token, and it works once the lock is gone', async () => {
    const holder = `LOCKED VAULT ${Date.now()}`;
    const tokens = () => count('SELECT count(*) AS n FROM vault.token_cards');
    const before = await tokens();
    await holding('LOCK TABLE vault.token_cards IN ACCESS EXCLUSIVE MODE', [], () => expectUnavailable(() => addToken(holder, '203111')));
    expect(await tokens()).toBe(before);
    await stack.tokenizer.waitForLog('dependency unavailable: lock_timeout (55P03)');
    // The reply says why without the statement: no parameters (the card's holder) in the log.
    expect(stack.logOf('tokenizer')).not.toContain(holder);
    expect((await addToken(holder, '203111')).status).toBe(200);
    expect(await tokens()).toBe(before + 1);
  });

  it('a capture whose claim waits on the transaction row past lock_timeout: 503, no claim, no acquirer call; then it captures', async () => {
    const auth = await receiver('authorize', saleBody(4000));
    expect(auth.json).toMatchObject({ status: '3' });
    const id = String(auth.json.transactionId).toLowerCase();
    const calls = () =>
      count(
        `SELECT count(*) AS n FROM sandbox_calls WHERE kind = 'capture' AND tid = (SELECT processor->>'tid' FROM transactions WHERE id = $1)`,
        [id],
      );
    await holding('SELECT 1 FROM transactions WHERE id = $1 FOR UPDATE', [id], () =>
      expectUnavailable(() => receiver('capture', { transactionId: id }, { 'idempotency-key': `cap-${id}` })),
    );
    expect((await db.query('SELECT status, captured_amount, pending_operation_id FROM transactions WHERE id = $1', [id])).rows[0]).toEqual({
      status: 3,
      captured_amount: '0',
      pending_operation_id: null,
    });
    expect(await count('SELECT count(*) AS n FROM transaction_operations WHERE transaction_id = $1', [id])).toBe(0);
    expect(await calls()).toBe(0);

    const captured = await receiver('capture', { transactionId: id }, { 'idempotency-key': `cap-${id}` });
    expect(captured.status).toBe(200);
    expect(captured.json).toMatchObject({ status: '8' });
    expect(await calls()).toBe(1);
  });

  it('a sale authorized by the acquirer whose decision cannot be recorded: 503, then declined 101 and reversed, never left charged', async () => {
    // The api records the sale (transactions is free); the tokenizer's decision writes its events
    // to the outbox in the same statement, and the outbox is locked: the decision rolls back whole.
    const body = saleBody(3300);
    await holding('LOCK TABLE outbox IN ACCESS EXCLUSIVE MODE', [], () => expectUnavailable(() => receiver('sale', body)));
    const [row] = (await db.query('SELECT id, status, status_version FROM transactions WHERE reference = $1', [body.order.reference])).rows;
    expect(row).toMatchObject({ status: 0, status_version: 1 });
    // As docs/merchants/sales.md says for a 503 on a sale: report by reference tells the truth, here "still pending".
    const pending = await post(stack.baseUrl, '/v1/receiver', {
      'transaction-request': { version: '1.0.0', verification: shop, report: { reference: body.order.reference } },
    });
    expect(pending.json).toMatchObject({ status: '0' });
    // The pending-sales reconciler reverses the authorization and declines the sale with 101.
    await eventually(
      async () =>
        expect((await db.query('SELECT status, error_code FROM transactions WHERE id = $1', [row.id])).rows[0]).toEqual({
          status: 4,
          error_code: '101',
        }),
      {
        timeoutMs: 30_000,
        intervalMs: 500,
      },
    );
    expect(
      await count(`SELECT count(*) AS n FROM sandbox_calls WHERE operation_key = $1 AND kind = 'reverse'`, [`${row.id}-reversal`]),
    ).toBe(1);
    expect(await count(`SELECT count(*) AS n FROM outbox WHERE aggregate_id = $1 AND event = 'transaction.captured'`, [row.id])).toBe(0);
  });

  it('a sale decided while its idempotent answer cannot be stored: answered 200 as recorded, and a repeat is refused, never run twice', async () => {
    const body = saleBody(4100);
    body.payment.cardNumber = SANDBOX_CARDS[9]; // approved after SANDBOX_SLOW_APPROVAL_MS: time to lock the key's row
    const key = `timeout-store-${Date.now()}`;
    const sale = receiver('sale', body, { 'idempotency-key': key });
    await eventually(async () => expect(await count('SELECT count(*) AS n FROM idempotency_keys WHERE key = $1', [key])).toBe(1), {
      timeoutMs: 5_000,
      intervalMs: 20,
    });
    const answered = await holding('SELECT 1 FROM idempotency_keys WHERE key = $1 FOR UPDATE', [key], () => sale);
    expect(answered.status).toBe(200);
    expect(answered.json).toMatchObject({ status: '8' });
    await stack.api.waitForLog('idempotent answer not stored: statement_timeout (code 57014)');
    expect((await db.query('SELECT response_status FROM idempotency_keys WHERE key = $1', [key])).rows).toEqual([
      { response_status: null },
    ]);

    const repeat = await receiver('sale', body, { 'idempotency-key': key });
    expect(repeat.status).toBe(409);
    expect(repeat.json.result.error.parameter).toBe('Idempotency-Key');
    expect(await count('SELECT count(*) AS n FROM transactions WHERE reference = $1', [body.order.reference])).toBe(1);
  });

  it('settlement and webhook deliveries blocked by a lock catch up once it is released; the ledger and the acquirer agree', async () => {
    const payables = (id: string) => count('SELECT count(*) AS n FROM payables WHERE transaction_id = $1', [id]);
    const ids: string[] = [];
    const deliveries = (id: string) => count('SELECT count(*) AS n FROM deliveries WHERE transaction_id = $1', [id]);
    // The notifier's deliveries batcher is held up the same way as settlement's ledger batcher.
    await holding('LOCK TABLE settlements, deliveries IN ACCESS EXCLUSIVE MODE', [], async () => {
      // Sales are answered by the tokenizer: the lock holds up only their settlement.
      for (let i = 0; i < 3; i++) {
        const sale = await receiver('sale', saleBody(5000 + i));
        expect(sale.json).toMatchObject({ status: '8' });
        ids.push(String(sale.json.transactionId).toLowerCase());
      }
      // Long enough for the settlement's first attempts (and their retries) to hit the lock.
      await new Promise((r) => setTimeout(r, 2_500));
      // deliveries itself is locked: reading it from another session would wait for the lock.
      for (const id of ids) expect(await payables(id)).toBe(0);
    });
    await eventually(
      async () => {
        for (const id of ids) expect([(await payables(id)) > 0, await deliveries(id)]).toEqual([true, 1]);
      },
      { timeoutMs: 60_000, intervalMs: 500 },
    );
    await expectReconciled(shop.merchantId);
  });

  it('after the locks: a burst succeeds whole and no app keeps a session idle in a transaction', async () => {
    const results = await Promise.all([
      ...Array.from({ length: 20 }, (_, i) => addToken(`BURST ${i}`)),
      ...Array.from({ length: 10 }, (_, i) => receiver('sale', saleBody(700 + i))),
    ]);
    expect(results.map((r) => r.status)).toEqual(results.map(() => 200));
    expect(results.slice(20).map((r) => (r.json as Json).status)).toEqual(results.slice(20).map(() => '8'));
    // A pass of the outbox relay is briefly idle in its transaction while it publishes; a session
    // left in a broken transaction would stay so.
    await eventually(
      async () => {
        const stuck = await count(
          `SELECT count(*) AS n FROM pg_stat_activity WHERE datname = current_database() AND pid <> pg_backend_pid() AND state LIKE 'idle in transaction%'`,
        );
        expect(stuck).toBe(0);
      },
      { timeoutMs: 5_000, intervalMs: 100 },
    );
    expect(stack.logOf('api')).not.toMatch(/unhandled error/);
    await expectReconciled(shop.merchantId);
  });
});
