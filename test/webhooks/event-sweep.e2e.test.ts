import { Client } from 'pg';
import { Webhook } from 'standardwebhooks';
import { testRedis } from '../support/redis';
import { createMerchant, MerchantCredentials, Stack, startStack } from '../support/stack';
import { loseEvents } from '../support/lost-events';
import { receiverOf, saleBody } from '../support/money';
import { Listener } from '../support/listener';

jest.setTimeout(180_000);

/** The test's listener is on loopback, which the notifier refuses unless allowed. */
const LISTENER_ALLOWED = { WEBHOOK_ALLOW_NETWORKS: '127.0.0.1/32' };

/**
 * A status change whose event Redis forgot (a restart without persistence, a failover to a replica
 * that lagged) still reaches the merchant's listener: the notifier's event sweep delivers it from
 * the outbox, once.
 */
describe('status changes whose events were lost', () => {
  let stack: Stack;
  let shop: MerchantCredentials;
  let listener: Listener;
  let db: Client;
  const redis = testRedis();

  beforeAll(async () => {
    [stack, shop, listener] = await Promise.all([
      startStack({}, { envFor: { notifier: LISTENER_ALLOWED } }),
      createMerchant('event-sweep'),
      new Listener().start(),
    ]);
    db = new Client({ connectionString: process.env.DATABASE_URL });
    await db.connect();
  });

  afterAll(async () => {
    await stack?.stop();
    await listener?.stop();
    await db?.end();
    redis.disconnect();
  });

  it('are delivered from the outbox by the event sweep, exactly once', async () => {
    // The notifier is away while the sale is decided and its event published.
    await stack.notifier.stop();
    const res = await receiverOf(stack.baseUrl, shop)('sale', saleBody(4_200, listener.url('/sweep')));
    expect(res.status).toBe(200);
    const id = String(res.json.transactionId).toLowerCase();
    // Redis forgets the event once it is published: every status-change stream of this run is gone.
    expect(await loseEvents(db, redis, id, 'transaction.status_changed')).toBe(1);

    await stack.restart('notifier', 'SIGTERM', { ...LISTENER_ALLOWED, WEBHOOK_EVENT_SWEEP_GRACE_S: '1', WEBHOOK_SWEEP_INTERVAL_MS: '500' });
    const [received] = await listener.transactionsAfter('/sweep', 0, 1, 30_000);
    expect(received).toBe(id);
    const [request] = listener.at('/sweep');
    const payload = new Webhook(shop.webhookSecret).verify(request.body, request.headers as Record<string, string>) as {
      data: { status: string };
    };
    expect(payload.data.status).toBe('8'); // approved, as the wire says it

    // Later passes find its delivery, and send nothing more.
    await new Promise((resolve) => setTimeout(resolve, 2_000));
    expect(listener.at('/sweep')).toHaveLength(1);
    const { rows } = await db.query(`SELECT status FROM deliveries WHERE transaction_id = $1`, [id]);
    expect(rows).toEqual([{ status: 'succeeded' }]);
    expect(stack.logOf('notifier')).toContain('delivered from the outbox');
  });
});
