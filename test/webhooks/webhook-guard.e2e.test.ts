import { createServer, Server } from 'node:http';
import { AddressInfo } from 'node:net';
import { networkInterfaces } from 'node:os';
import { Client } from 'pg';
import { createMerchant, eventually, MerchantCredentials, startStack, Stack } from '../support/stack';
import { receiverOf, saleBody } from '../support/money';

jest.setTimeout(120_000);

/** A listener that counts the connections it accepts and answers 200. */
async function listen(host: string): Promise<{ url: string; connections: () => number; stop: () => Promise<void> }> {
  let connections = 0;
  const server: Server = createServer((_req, res) => res.end('ok'));
  server.on('connection', () => connections++);
  await new Promise<void>((resolve) => server.listen(0, host, resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://${host.includes(':') ? `[${host}]` : host}:${port}/hook`,
    connections: () => connections,
    stop: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

/**
 * Issue 14 item 6: a webhook aimed at the notifier host's own non-loopback address (a service
 * bound to 0.0.0.0 there would answer) is refused and recorded as blocked, while a listener the
 * allowlist names is delivered to in the same stack.
 */
describe("the webhook guard and the notifier host's own addresses", () => {
  let stack: Stack;
  let shop: MerchantCredentials;
  let db: Client;
  // An address of this machine that is not loopback: the interface other hosts reach it on.
  const own = Object.values(networkInterfaces())
    .flat()
    .find((i) => !!i && !i.internal && i.family === 'IPv4')?.address;

  const sale = (urlReturn: string) => receiverOf(stack.baseUrl, shop)('sale', saleBody(5_000, urlReturn));
  const deliveryOf = async (transactionId: string) => {
    const row = (
      await db.query('SELECT * FROM deliveries WHERE transaction_id = $1 ORDER BY status_version DESC LIMIT 1', [
        transactionId.toLowerCase(),
      ])
    ).rows[0];
    expect(row).toBeDefined();
    return row;
  };

  beforeAll(async () => {
    db = new Client({ connectionString: process.env.DATABASE_URL });
    await db.connect();
    stack = await startStack(
      {},
      { envFor: { notifier: { WEBHOOK_ALLOW_NETWORKS: '127.0.0.1/32', WEBHOOK_SCHEDULE_SCALE: '0.0001', WEBHOOK_TIMEOUT_MS: '3000' } } },
    );
    shop = await createMerchant('webhook guard shop');
  });

  afterAll(async () => {
    await stack?.stop();
    await db?.end();
  });

  it('this machine has a non-loopback IPv4 interface (without one the next test would prove nothing)', () => {
    expect(own).toBeDefined();
  });

  it("delivers to the allowlisted loopback listener, refuses the one on the host's own interface address: blocked, never connected", async () => {
    const allowed = await listen('127.0.0.1');
    const ours = await listen(own!);
    try {
      const ok = await sale(allowed.url);
      const refused = await sale(ours.url);
      expect([ok.status, refused.status]).toEqual([200, 200]);
      await eventually(async () => expect((await deliveryOf(ok.json.transactionId)).status).toBe('succeeded'), { timeoutMs: 20_000 });
      const blocked = await eventually(
        async () => {
          const row = await deliveryOf(refused.json.transactionId);
          expect(row.status).toBe('blocked');
          return row;
        },
        { timeoutMs: 20_000 },
      );
      const attempts = (await db.query('SELECT error_class, response_body FROM delivery_attempts WHERE delivery_id = $1', [blocked.id]))
        .rows;
      expect(attempts.map((a) => a.error_class)).toEqual(['ssrf_blocked']);
      expect(attempts[0].response_body).toContain("notifier host's own addresses");
      expect(ours.connections()).toBe(0);
      expect(allowed.connections()).toBeGreaterThan(0);
    } finally {
      await Promise.all([allowed.stop(), ours.stop()]);
    }
  });
});
