import { randomBytes } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import { deleteKeys, type RedisConnection } from '@app/platform';
import { testRedis } from '../support/redis';
import { MerchantSlots } from '../../apps/notifier/src/deliveries/merchant-slots';
import { createMerchant, eventually, MerchantCredentials, Stack, startStack } from '../support/stack';
import { receiverOf, saleBody } from '../support/money';
import { LOCAL_LISTENER_ENV } from '../support/deliveries';
import { Listener } from '../support/listener';

jest.setTimeout(120_000);

/** The caps under test, at their documented defaults. */
const PER_MERCHANT = 16;
const FLOOD = 96;
/** How long merchant A's listeners take to answer: far longer than an attempt may last. */
const HANG_MS = 30_000;

/**
 * The merchant's slots alone, on the real Redis (a key prefix of their own), two clients standing
 * for two notifier replicas: one count for both, a slot given back is free again, and a slot a dead
 * replica never gave back runs out with its lease.
 */
describe('merchant slots (Redis leases)', () => {
  const clients: RedisConnection[] = [];
  const prefix = `wf-${randomBytes(4).toString('hex')}`;
  const merchant = '6f1c2d3e-0000-4000-8000-0000000000f1';

  beforeAll(() => {
    for (let i = 0; i < 2; i++) clients.push(testRedis({ maxRetriesPerRequest: 1 }));
  });
  afterAll(async () => {
    await deleteKeys(clients[0], `${prefix}:*`);
    await Promise.all(clients.map((c) => c.quit()));
  });

  it('caps a merchant over every replica, frees a slot given back, and lets a lease run out', async () => {
    const [a, b] = clients.map((c) => new MerchantSlots(c, prefix, 3, 400));
    const held = await Promise.all([a.acquire(merchant), b.acquire(merchant), a.acquire(merchant)]);
    expect(held.every(Boolean)).toBe(true);
    expect(await b.acquire(merchant)).toBeUndefined();
    expect(await a.acquire(merchant)).toBeUndefined();
    expect(await b.acquire('another-merchant')).toBeDefined(); // every merchant has slots of its own
    expect(await a.heldBy(merchant)).toBe(3);
    held[1]!();
    await sleep(20); // the release is not waited for
    const again = await a.acquire(merchant);
    expect(again).toBeDefined();
    expect(await b.acquire(merchant)).toBeUndefined();
    // No one gives the slots back (a replica killed mid-attempt): the leases run out.
    await sleep(450);
    expect(await b.acquire(merchant)).toBeDefined();
    // A deferral is at least 100 ms, spaced out as more come.
    expect(a.deferMs(merchant)).toBeGreaterThanOrEqual(100);
  });
});

/**
 * Issue 32, finding 2: one merchant must not hold back every merchant's webhooks. Merchant A sends
 * 96 sales whose listeners hang (several ports of 127.0.0.1, and a second host, 127.0.0.3); the
 * per-destination cap counts a host once whatever its port, and the per-merchant cap bounds A's
 * attempts in flight over all its hosts. Merchant B's webhook (127.0.0.2), sent once A's flood is
 * in, must still arrive within a few seconds (it took 12.5 s when A held all 64 delivery slots),
 * and A never has more than WEBHOOK_PER_MERCHANT requests open at once.
 */
describe('webhook fairness: a flooding merchant does not hold back the others', () => {
  let stack: Stack;
  let shopA: MerchantCredentials;
  let shopB: MerchantCredentials;
  const hanging: Listener[] = [];
  let fast: Listener;
  let maxOpenA = 0;
  const openA = () => hanging.reduce((n, l) => n + l.open, 0);

  beforeAll(async () => {
    // Four ports on one host and two on another: the per-host cap alone would let A hold 32.
    for (const host of ['127.0.0.1', '127.0.0.1', '127.0.0.1', '127.0.0.1', '127.0.0.3', '127.0.0.3']) {
      const l = await new Listener(host).start();
      l.on('/hook', () => {
        maxOpenA = Math.max(maxOpenA, openA());
        return { status: 200, delayMs: HANG_MS };
      });
      hanging.push(l);
    }
    fast = await new Listener('127.0.0.2').start();
    stack = await startStack(
      {},
      { envFor: { notifier: { ...LOCAL_LISTENER_ENV, WEBHOOK_ALLOW_NETWORKS: '127.0.0.0/8', WEBHOOK_TIMEOUT_MS: '15000' } } },
    );
    [shopA, shopB] = await Promise.all([createMerchant('fairness flood shop'), createMerchant('fairness quiet shop')]);
  });

  afterAll(async () => {
    // Closing the hanging listeners first ends A's attempts at once, so the notifier stops quickly.
    await Promise.all(hanging.map((l) => l.stop()));
    await fast?.stop();
    await stack?.stop();
  });

  it(`B's webhook arrives in under 3 s while A floods hanging listeners; A holds at most ${PER_MERCHANT} at once`, async () => {
    const sellA = receiverOf(stack.baseUrl, shopA);
    const urls = Array.from({ length: FLOOD }, (_, i) => hanging[i % hanging.length].url('/hook'));
    let next = 0;
    await Promise.all(
      Array.from({ length: 8 }, async () => {
        while (next < urls.length) {
          const res = await sellA('sale', saleBody(5_000, urls[next++]));
          expect(res.json).toMatchObject({ status: '8' });
        }
      }),
    );
    const sampler = setInterval(() => (maxOpenA = Math.max(maxOpenA, openA())), 5);
    try {
      // A's flood is in: its attempts hang, as many as the notifier lets them.
      await eventually(() => expect(openA()).toBeGreaterThanOrEqual(PER_MERCHANT), { timeoutMs: 20_000, intervalMs: 50 });
      await sleep(1_000);

      const sold = await receiverOf(stack.baseUrl, shopB)('sale', saleBody(5_000, fast.url('/hook')));
      expect(sold.json).toMatchObject({ status: '8' });
      const soldAt = Date.now();
      const arrivedAt = await eventually(
        () => {
          expect(fast.at('/hook')).toHaveLength(1);
          return Date.now();
        },
        { timeoutMs: 40_000, intervalMs: 20 },
      );
      const waitedMs = arrivedAt - soldAt;
      await sleep(1_000); // A keeps flooding meanwhile
      const metrics = await (await fetch(`http://127.0.0.1:${stack.notifier.healthPort}/metrics`)).text();
      const deferredByMerchantCap = Number(/^webhook_deliveries_deferred_total\{cap="merchant"[^}]*\} (\S+)$/m.exec(metrics)?.[1] ?? 0);
      console.log(
        `fairness: B's webhook after ${waitedMs} ms; A at most ${maxOpenA} open (${openA()} now); ${deferredByMerchantCap} put back by the merchant cap`,
      );

      expect(waitedMs).toBeLessThan(3_000);
      expect(maxOpenA).toBeLessThanOrEqual(PER_MERCHANT);
      // It was the merchant's cap that held A back (its two hosts would have let it hold 32).
      expect(deferredByMerchantCap).toBeGreaterThan(0);
      expect(fast.at('/hook')[0].transactionId?.toLowerCase()).toBe(String(sold.json.transactionId).toLowerCase());
    } finally {
      clearInterval(sampler);
    }
  });
});
