import { randomUUID } from 'node:crypto';
import { Queue } from 'bullmq';
import { queueOn } from '@app/messaging';
import type { RedisConnection } from '@app/platform';
import { testRedis } from '../support/redis';
import { Client } from 'pg';
import { CANARY_CODES, SANDBOX_CARDS } from '../fixtures/cards';
import { createMerchant, eventually, MerchantCredentials, post, Stack, startStack } from '../support/stack';

jest.setTimeout(120_000);

/**
 * Every sale ends in a final status, even one whose authorization job never existed (the API
 * stopped between recording the sale and queueing it) or whose decision could not be recorded
 * after the acquirer answered: the tokenizer's reconciler declines it with 101, reversing
 * whatever the acquirer knows of it, and leaves alone a sale whose job still waits.
 */
describe('sales left pending without an authorization job', () => {
  let stack: Stack;
  let shop: MerchantCredentials;
  let db: Client;
  let redis: RedisConnection;
  let authorizeQueue: Queue;

  const pendingSale = async (id: string = randomUUID()): Promise<string> => {
    await db.query(
      `INSERT INTO transactions (id, merchant_id, reference, operation, status, acquirer, method, instalments, currency, amount, masked_card, brand, url_return, created_at)
       VALUES ($1, $2, $3, 3, 0, 26, 1, 1, '986', 4200, '400700******0001', 'visa', 'https://merchant.example/listener', now() - interval '10 seconds')`,
      [id, shop.internalId, `ORPHAN-${id.slice(0, 8)}`],
    );
    return id;
  };
  const statusOf = async (id: string) =>
    (await db.query('SELECT status, error_code, processor, status_version FROM transactions WHERE id = $1', [id])).rows[0];
  const report = (id: string) =>
    post(stack.baseUrl, '/v1/receiver', {
      'transaction-request': { version: '1.0.0', verification: shop, report: { transactionId: id.toUpperCase() } },
    });

  beforeAll(async () => {
    db = new Client({ connectionString: process.env.DATABASE_URL });
    await db.connect();
    redis = testRedis({ maxRetriesPerRequest: null });
    authorizeQueue = new Queue('card.authorize', queueOn(redis, process.env.QUEUE_PREFIX!, 'card.authorize'));
    stack = await startStack({}, { envFor: { tokenizer: { SALE_ORPHAN_AFTER_S: '2', SALE_RECONCILE_INTERVAL_MS: '300' } } });
    shop = await createMerchant('orphan shop');
  });

  afterAll(async () => {
    await stack?.stop();
    await authorizeQueue?.close();
    redis?.disconnect();
    await db?.end();
  });

  it('declines a sale that never reached the acquirer with 101, and tells the listener', async () => {
    const id = await pendingSale();
    await eventually(async () => expect(await statusOf(id)).toMatchObject({ status: 4, error_code: '101', status_version: 2 }), {
      timeoutMs: 15_000,
    });
    expect((await report(id)).json).toMatchObject({ status: '4', errorCode: '101' });
    const events = await db.query(`SELECT event FROM outbox WHERE aggregate_id = $1`, [id]);
    expect(events.rows.map((r) => r.event)).toEqual(['transaction.status_changed']);
    expect((await db.query(`SELECT 1 FROM sandbox_calls WHERE operation_key LIKE $1`, [`${id}-%`])).rowCount).toBe(0);
  });

  it('reverses an authorization the acquirer approved but the gateway never recorded', async () => {
    const id = await pendingSale();
    const result = {
      outcome: 'approved',
      returnCode: '00',
      returnMessage: 'Approved',
      authorizationCode: '123456',
      tid: `tid${id.slice(0, 8)}`,
      nsu: '000000001',
    };
    await db.query(
      `INSERT INTO sandbox_calls (operation_key, kind, masked_pan, amount, tid, result) VALUES ($1, 'authorize', '400700******0001', 4200, $2, $3)`,
      [`${id}-authorize`, result.tid, JSON.stringify(result)],
    );
    await eventually(
      async () => expect(await statusOf(id)).toMatchObject({ status: 4, error_code: '101', processor: { tid: result.tid } }),
      { timeoutMs: 15_000 },
    );
    const reversals = await db.query(`SELECT kind, tid FROM sandbox_calls WHERE operation_key = $1 AND NOT repeat`, [`${id}-reversal`]);
    expect(reversals.rows).toEqual([{ kind: 'reverse', tid: result.tid }]);
  });

  it('leaves alone a sale whose authorization job still waits, and decides it once the job is gone', async () => {
    // A job that waits (delayed far ahead): the tokenizers are busy or down; the job will decide it.
    // The job is queued before its sale is recorded (as the API does it, in effect): the row is
    // already stale when written, so a pass falling between the two would rightly abandon it.
    const id = randomUUID();
    const job = await authorizeQueue.add(
      'card.authorize',
      { p: { transactionId: id, merchantId: shop.internalId } },
      { jobId: id, delay: 3_600_000 },
    );
    await pendingSale(id);
    await new Promise((r) => setTimeout(r, 3_000));
    expect(await statusOf(id)).toMatchObject({ status: 0 });
    await job.remove();
    await eventually(async () => expect(await statusOf(id)).toMatchObject({ status: 4, error_code: '101' }), { timeoutMs: 15_000 });
  });

  it('a job that carries a sale already decided changes nothing and charges nothing more', async () => {
    // The tokenizer decides a first delivery from the row the API recorded with it (status 0),
    // without reading it back. Replay such a job after its sale was decided: the acquirer call
    // repeats the same operation key and the compare-and-set fails, so nothing changes.
    const sale = await post(
      stack.baseUrl,
      '/v1/receiver',
      {
        'transaction-request': {
          version: '1.0.0',
          verification: shop,
          sale: {
            order: { reference: 'STALE-1', totalAmount: 4200 },
            payment: {
              acquirer: 26,
              method: 1,
              amount: 4200,
              currency: '986',
              country: 'BRA',
              numberOfPayments: 1,
              cardHolder: 'MARIA SILVA',
              cardNumber: SANDBOX_CARDS[9],
              cardSecurityCode: CANARY_CODES[0],
              cardExpirationDate: '203012',
            },
          },
        },
      },
      { prefer: 'respond-async' },
    );
    expect(sale.status).toBe(202);
    const id = String((sale.json as { transactionId: string }).transactionId).toLowerCase();
    // A card ending in 9 is approved after a delay: meanwhile the job is in Redis, sealed card and all.
    const original = await eventually(async () => (await authorizeQueue.getJob(id))!.data);
    expect((original.p as { recorded: { status: number } }).recorded).toMatchObject({ id, status: 0, statusVersion: 1 });
    await eventually(async () => expect(await statusOf(id)).toMatchObject({ status: 8, status_version: 2 }), { timeoutMs: 15_000 });
    const decided = await statusOf(id);

    const replay = await authorizeQueue.add('card.authorize', original, { jobId: `replay-${id}` });
    await eventually(async () => expect(await replay.getState()).toBe('completed'), { timeoutMs: 15_000 });
    expect(await statusOf(id)).toEqual(decided);
    const calls = await db.query(`SELECT repeat FROM sandbox_calls WHERE operation_key = $1 ORDER BY repeat`, [`${id}-authorize`]);
    expect(calls.rows).toEqual([{ repeat: false }, { repeat: true }]);
    expect((await db.query(`SELECT event FROM outbox WHERE aggregate_id = $1`, [id])).rows).toEqual([{ event: 'transaction.captured' }]);
  });
});
