import Redis from 'ioredis';
import { Client } from 'pg';
import { LOCAL_LISTENER_ENV } from '../support/deliveries';
import { Listener } from '../support/listener';
import { receiverOf, saleBody } from '../support/money';
import { createMerchant, eventually, MerchantCredentials, PrivateServer, Stack, startPrivateRedis, startStack } from '../support/stack';

jest.setTimeout(180_000);

/**
 * What one sale costs Redis: every command (those BullMQ's scripts run included), every job and
 * every event, counted on a Redis of the suite's own with MONITOR, the stack's idle polling over
 * the same time taken off. docs/decisions/0012 sets the cost the sale protocol is to meet (60
 * commands, one job, an event per status change and per capture); the command budget here is 10 %
 * above it, for the noise of taking the idle polling off.
 */
const BUDGET = { commandsPerSale: 66, jobsPerSale: 1, eventsPerSale: 2 };
const SALES = 120;
const AT_ONCE = 8;

interface Counts {
  commands: number;
  jobs: Map<string, number>;
  /** Entries added to the event streams, by stream. */
  events: Map<string, number>;
}

/** Counts the commands on the stack's keys (its queue prefix) and the jobs added, by queue, while `during` runs. */
async function counted(redisUrl: string, prefix: string, during: () => Promise<unknown>): Promise<Counts & { ms: number }> {
  const monitor = await new Redis(redisUrl).monitor();
  const counts: Counts = { commands: 0, jobs: new Map(), events: new Map() };
  monitor.on('monitor', (_time: string, args: string[]) => {
    if (!args.some((a) => a.startsWith(prefix))) return;
    counts.commands++;
    // BullMQ marks every job it adds with an `added` event on the queue's event stream.
    if (args[0].toLowerCase() === 'xadd' && args.includes('added')) {
      const queue = args[1].slice(prefix.length + 1).split(':')[0];
      counts.jobs.set(queue, (counts.jobs.get(queue) ?? 0) + 1);
    }
    // An event: one entry on its pattern's stream (libs/messaging/src/event-stream.ts).
    if (args[0].toLowerCase() === 'xadd' && args[1].endsWith(':stream')) {
      const stream = args[1].slice(prefix.length + 1).split(':')[0];
      counts.events.set(stream, (counts.events.get(stream) ?? 0) + 1);
    }
  });
  const started = Date.now();
  try {
    await during();
  } finally {
    monitor.disconnect();
  }
  return { ...counts, ms: Date.now() - started };
}

describe('what a sale costs Redis', () => {
  let redis: PrivateServer;
  let stack: Stack;
  let shop: MerchantCredentials;
  let db: Client;
  const listener = new Listener();
  const prefix = process.env.QUEUE_PREFIX!;

  beforeAll(async () => {
    redis = await startPrivateRedis();
    await listener.start();
    stack = await startStack({ ...LOCAL_LISTENER_ENV, REDIS_URL: redis.url, REDIS_CLUSTER_NODES: '' }, { readyTimeoutMs: 90_000 });
    shop = await createMerchant('sale cost shop');
    db = new Client({ connectionString: process.env.DATABASE_URL });
    await db.connect();
  });

  afterAll(async () => {
    await stack?.stop();
    await listener.stop();
    await db?.end();
    await redis?.destroy();
  });

  /** `n` sales, `AT_ONCE` at a time, then until every webhook arrived and every sale is settled. */
  async function sales(n: number): Promise<string[]> {
    const receiver = receiverOf(stack.baseUrl, shop);
    const heard = listener.at('/cost').length;
    const ids: string[] = [];
    for (let i = 0; i < n; i += AT_ONCE) {
      const batch = await Promise.all(
        Array.from({ length: Math.min(AT_ONCE, n - i) }, () => receiver('sale', saleBody(1_000, listener.url('/cost')))),
      );
      for (const r of batch) {
        expect(r.status).toBe(200);
        ids.push(r.json.transactionId as string);
      }
    }
    await eventually(() => expect(listener.at('/cost').length - heard).toBe(n), { timeoutMs: 60_000, intervalMs: 100 });
    await eventually(
      async () => {
        const { rows } = await db.query('SELECT count(*)::int AS n FROM settlements WHERE transaction_id = ANY($1::uuid[])', [
          ids.map((id) => id.toLowerCase()),
        ]);
        expect(rows[0].n).toBe(n);
      },
      { timeoutMs: 60_000, intervalMs: 100 },
    );
    return ids;
  }

  it(`stays within ${BUDGET.commandsPerSale} commands, ${BUDGET.jobsPerSale} job and ${BUDGET.eventsPerSale} events a sale, its webhook and its settlement included`, async () => {
    await sales(AT_ONCE * 2); // warm: connections, scripts loaded, JIT
    const idle = await counted(redis.url, prefix, () => new Promise((r) => setTimeout(r, 5_000)));
    const busy = await counted(redis.url, prefix, () => sales(SALES));
    const idlePerMs = idle.commands / idle.ms;
    const commandsPerSale = (busy.commands - idlePerMs * busy.ms) / SALES;
    const jobs = [...busy.jobs.values()].reduce((a, b) => a + b, 0) - [...idle.jobs.values()].reduce((a, b) => a + b, 0);
    const jobsPerSale = jobs / SALES;
    const sum = (m: Map<string, number>) => [...m.values()].reduce((a, b) => a + b, 0);
    // Events come from sales only (the warm-up's were handled before the idle window): none to take off.
    const eventsPerSale = sum(busy.events) / SALES;
    process.stdout.write(
      `sale cost: ${commandsPerSale.toFixed(1)} Redis commands, ${jobsPerSale.toFixed(2)} jobs and ${eventsPerSale.toFixed(2)} events a sale ` +
        `(${SALES} sales, ${AT_ONCE} at a time, in ${busy.ms} ms; idle ${(idlePerMs * 1000).toFixed(1)} commands/s taken off); ` +
        `jobs by queue: ${JSON.stringify(Object.fromEntries(busy.jobs))}; events by stream: ${JSON.stringify(Object.fromEntries(busy.events))}\n`,
    );
    expect(commandsPerSale).toBeGreaterThan(0);
    expect(commandsPerSale).toBeLessThanOrEqual(BUDGET.commandsPerSale);
    // One job a sale, its authorization; a background job (a sweeper's, a recovery's) that fell in
    // the window is not a sale's, and may add a few hundredths.
    expect(busy.jobs.get('card.authorize')).toBe(SALES);
    expect(jobsPerSale).toBeLessThanOrEqual(BUDGET.jobsPerSale + 0.05);
    // Every approved sale's change reached both readers: a status change and a capture, once each.
    expect(eventsPerSale).toBe(BUDGET.eventsPerSale);
  });
});
