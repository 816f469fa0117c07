import { Client } from 'pg';
import Redis from 'ioredis';
import { eventStreamKeys, fieldMap, partitionIndex } from '@app/messaging';
import {
  createMerchant,
  eventually,
  MerchantCredentials,
  post,
  PrivateServer,
  Stack,
  startPrivateRedis,
  startStack,
} from '../support/stack';
import { SANDBOX_CARDS } from '../fixtures/cards';

jest.setTimeout(240_000);

/**
 * DESIGN.md 4: killing a worker mid-job or losing Redis loses no sale and duplicates no charge
 * or event. Each scenario runs on its own private Redis; Postgres is the run's database.
 */
describe('sales under faults', () => {
  let db: Client;
  beforeAll(async () => {
    db = new Client({ connectionString: process.env.DATABASE_URL });
    await db.connect();
  });
  afterAll(async () => {
    await db?.end();
  });

  const sale = (stack: Stack, m: MerchantCredentials, digit: number, reference: string, headers: Record<string, string> = {}) =>
    post(
      stack.baseUrl,
      '/v1/receiver',
      {
        'transaction-request': {
          version: '1.0.0',
          verification: m,
          sale: {
            order: { reference, totalAmount: 1000 },
            payment: {
              acquirer: 26,
              method: 1,
              amount: 1000,
              currency: '986',
              country: 'BRA',
              cardHolder: 'FAULT',
              cardNumber: SANDBOX_CARDS[digit],
              cardExpirationDate: '203012',
            },
            // A listener, so each approval records both of its events (status_changed, captured).
            urlReturn: 'https://merchant.example/listener',
          },
        },
      },
      headers,
    );

  const statusesOf = async (merchantId: string) =>
    // the internal id
    (await db.query<{ id: string; status: number }>('SELECT id, status FROM transactions WHERE merchant_id = $1', [merchantId])).rows;

  it('publishes every outbox event exactly once after a Redis outage during commits', async () => {
    const redis: PrivateServer = await startPrivateRedis();
    const stack = await startStack({
      REDIS_URL: redis.url,
      REDIS_CLUSTER_NODES: '',
      SANDBOX_SLOW_APPROVAL_MS: '2500',
      OUTBOX_INTERVAL_MS: '100',
    });
    try {
      const m = await createMerchant('outbox fault shop');
      // Slow approvals (card ending in 9): the tokenizer is mid-authorization when Redis goes.
      const accepted = await Promise.all(Array.from({ length: 20 }, (_, i) => sale(stack, m, 9, `OB-${i}`, { prefer: 'respond-async' })));
      expect(accepted.every((r) => r.status === 202)).toBe(true);
      await new Promise((r) => setTimeout(r, 800));
      await redis.stop();

      // The outcomes commit to Postgres with their outbox events while Redis is away.
      await eventually(async () => expect((await statusesOf(m.internalId)).filter((t) => t.status === 8)).toHaveLength(20), {
        timeoutMs: 30_000,
      });
      const ids = (await statusesOf(m.internalId)).map((t) => t.id);
      const pending = await db.query<{ n: number }>(
        'SELECT count(*)::int AS n FROM outbox WHERE aggregate_id = ANY($1) AND published_at IS NULL',
        [ids],
      );
      expect(pending.rows[0].n).toBeGreaterThan(0);

      await redis.start();
      await eventually(
        async () => {
          const left = await db.query<{ n: number }>(
            'SELECT count(*)::int AS n FROM outbox WHERE aggregate_id = ANY($1) AND published_at IS NULL',
            [ids],
          );
          expect(left.rows[0].n).toBe(0);
        },
        { timeoutMs: 60_000, intervalMs: 250 },
      );

      // Exactly once: each outbox row published (its dedup marker, named by the outbox id, is
      // there) and one stream entry added per row over the streams' whole life.
      const rows = (await db.query<{ id: string; event: string }>('SELECT id, event FROM outbox WHERE aggregate_id = ANY($1)', [ids])).rows;
      expect(rows.length).toBe(20 * 2); // status_changed + captured for each approved sale
      const r = new Redis(redis.url);
      const prefix = process.env.QUEUE_PREFIX!;
      const partitions = Number(process.env.QUEUE_PARTITIONS ?? 1);
      try {
        for (const event of ['transaction.status_changed', 'transaction.captured']) {
          const published = rows.filter((x) => x.event === event).map((x) => `outbox-${x.id}`);
          for (const id of published) {
            const keys = eventStreamKeys(r, prefix, event, partitionIndex(id, partitions), partitions);
            expect({ id, marked: await r.exists(keys.seen(id)) }).toEqual({ id, marked: 1 });
          }
          let added = 0;
          for (let i = 0; i < partitions; i++) {
            const info = fieldMap<unknown>((await r.xinfo('STREAM', eventStreamKeys(r, prefix, event, i, partitions).stream)) as unknown[]);
            added += Number(info['entries-added']);
          }
          expect({ event, added }).toEqual({ event, added: published.length });
        }
      } finally {
        r.disconnect();
      }
    } finally {
      await stack.stop();
      await redis.destroy();
    }
  });

  it('loses no sale and charges none twice when the tokenizer is killed with 200 sales in flight', async () => {
    const redis: PrivateServer = await startPrivateRedis();
    const stack = await startStack({
      REDIS_URL: redis.url,
      REDIS_CLUSTER_NODES: '',
      SANDBOX_SLOW_APPROVAL_MS: '300',
      SALE_SYNC_WAIT_MS: '30000',
      REPLY_TIMEOUT_MS: '60000',
    });
    try {
      const m = await createMerchant('crash shop');
      const digits = [1, 2, 9, 8, 0];
      const responses = Array.from({ length: 200 }, (_, i) => sale(stack, m, digits[i % digits.length], `CR-${i}`));
      await eventually(async () => expect((await statusesOf(m.internalId)).filter((t) => t.status !== 0).length).toBeGreaterThan(20), {
        timeoutMs: 30_000,
        intervalMs: 50,
      });
      await stack.tokenizer.kill();
      await stack.restart('tokenizer');

      const answered = await Promise.all(responses);
      // Each sale was answered with its outcome, or as pending (202) to resolve later; none failed.
      expect(answered.filter((r) => r.status !== 200 && r.status !== 202).map((r) => r.status)).toEqual([]);
      await eventually(async () => expect((await statusesOf(m.internalId)).filter((t) => t.status === 0)).toEqual([]), {
        timeoutMs: 90_000,
        intervalMs: 500,
      });

      const sales = await statusesOf(m.internalId);
      expect(sales).toHaveLength(200);
      const calls = await db.query<{ operation_key: string; charges: number; repeats: number }>(
        `SELECT operation_key, count(*) FILTER (WHERE NOT repeat)::int AS charges, count(*) FILTER (WHERE repeat)::int AS repeats
         FROM sandbox_calls WHERE kind = 'authorize' AND operation_key = ANY($1) GROUP BY operation_key`,
        [sales.map((t) => `${t.id}-authorize`)],
      );
      // Every sale reached the acquirer, and each was charged once: a job re-run after the crash
      // repeats its operation key, which the acquirer answers from its record.
      expect(calls.rows).toHaveLength(200);
      expect(calls.rows.filter((c) => c.charges !== 1)).toEqual([]);
    } finally {
      await stack.stop();
      await redis.destroy();
    }
  });
});
