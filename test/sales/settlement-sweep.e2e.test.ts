import { Client } from 'pg';
import { testRedis } from '../support/redis';
import { createMerchant, eventually, MerchantCredentials, Stack, startStack } from '../support/stack';
import { receiverOf, saleBody } from '../support/money';
import { loseEvents } from '../support/lost-events';

jest.setTimeout(180_000);

/** The sweep's settings for the restarted settlement worker: a grace of a second, a pass every half second. */
const SWEEP_NOW = { SETTLEMENT_SWEEP_GRACE_S: '1', SETTLEMENT_SWEEP_INTERVAL_MS: '500' };

/**
 * A capture or a cancel whose event Redis forgot (a restart without persistence, a failover to a
 * replica that lagged) is still settled: the settlement worker's sweep settles it from the outbox,
 * once.
 */
describe('captures and cancels whose events were lost', () => {
  let stack: Stack;
  let shop: MerchantCredentials;
  let db: Client;
  const redis = testRedis();

  const send = (op: string, body: unknown) => receiverOf(stack.baseUrl, shop)(op, body);
  const settlementOf = async (id: string) =>
    (await db.query('SELECT gross::int, cancelled::int FROM settlements WHERE transaction_id = $1', [id])).rows;
  const payablesOf = async (id: string) =>
    (await db.query('SELECT count(*)::int AS n FROM payables WHERE transaction_id = $1', [id])).rows[0].n as number;

  const loseEvent = (id: string, event: string) => loseEvents(db, redis, id, event);

  beforeAll(async () => {
    [stack, shop] = await Promise.all([startStack(), createMerchant('settlement-sweep')]);
    db = new Client({ connectionString: process.env.DATABASE_URL });
    await db.connect();
  });

  afterAll(async () => {
    await stack?.stop();
    await db?.end();
    redis.disconnect();
  });

  it('a lost capture gets its payables, once', async () => {
    await stack.settlement.stop();
    const sale = await send('sale', saleBody(10_000));
    expect(sale.status).toBe(200);
    const id = String(sale.json.transactionId).toLowerCase();
    await loseEvent(id, 'transaction.captured');
    expect(await settlementOf(id)).toEqual([]);

    await stack.restart('settlement', 'SIGTERM', SWEEP_NOW);
    await eventually(async () => expect(await settlementOf(id)).toEqual([{ gross: 10_000, cancelled: 0 }]), { timeoutMs: 30_000 });
    const payables = await payablesOf(id);
    expect(payables).toBeGreaterThan(0);
    // Later passes find it settled, and write nothing more.
    await new Promise((resolve) => setTimeout(resolve, 2_000));
    expect(await payablesOf(id)).toBe(payables);
    expect(stack.logOf('settlement')).toContain('settled from the outbox');
  });

  it('a lost cancel gets its reversal, once', async () => {
    const sale = await send('sale', saleBody(8_000));
    expect(sale.status).toBe(200);
    const id = String(sale.json.transactionId).toLowerCase();
    await eventually(async () => expect(await settlementOf(id)).toEqual([{ gross: 8_000, cancelled: 0 }]), { timeoutMs: 30_000 });

    await stack.settlement.stop();
    const cancel = await send('cancel', { transactionId: id.toUpperCase(), amount: 3_000 });
    expect(cancel.status).toBe(200);
    await loseEvent(id, 'transaction.cancelled');
    const before = await payablesOf(id);

    await stack.restart('settlement', 'SIGTERM', SWEEP_NOW);
    await eventually(async () => expect(await settlementOf(id)).toEqual([{ gross: 8_000, cancelled: 3_000 }]), { timeoutMs: 30_000 });
    const after = await payablesOf(id);
    expect(after).toBeGreaterThan(before);
    await new Promise((resolve) => setTimeout(resolve, 2_000));
    expect(await payablesOf(id)).toBe(after);
  });
});
