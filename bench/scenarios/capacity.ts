import { chmodSync, mkdtempSync, rmSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { Queue } from 'bullmq';
import Redis from 'ioredis';
import { Events } from '@app/contracts';
import { PrivateServer, startPrivatePostgresCluster, startPrivateRedisServer } from '../../scripts/lib/local-servers';
import { sleep, within } from '../../scripts/lib/processes';
import { Counters, perSale, RedisFacts, Round } from '../lib/capacity-model';
import { PIPELINE_TIMEOUT_MS, Probe } from '../lib/capacity-probe';
import { WebhookListener } from '../lib/listener';
import { OpenLoopResult, runOpenLoop } from '../lib/open-loop';
import { BenchStack, startBenchStack, waitUntilIdle } from '../lib/stack';
import { BENCH_CARD, saleRequest } from './sales';
import { approvedRecipients, threeWaySplit } from './split-sales';
import { seedTokens } from './tokens';

/**
 * The `capacity` group: what one sale costs each part of the gateway, counted precisely. The
 * stack runs on a Redis and a Postgres of its own (started here on spare ports, so nobody else's
 * commands or statements are counted; Postgres with pg_stat_statements, and durable as in
 * production: fsync, synchronous commit and full-page writes on). Each round sends a fixed number
 * of sales at a fixed rate, waits until the whole pipeline is done (settlement's payables
 * written, every webhook delivered to a listener in this process), and counts the difference;
 * the same counters over an idle window just before tell what the stack spends doing nothing,
 * which perSale() takes off.
 */
export interface CapacityOptions {
  rounds: number;
  /** Sales per round. */
  sales: number;
  /** Sales per second, open loop. */
  rate: number;
  /** Relative weights of card sales, token sales and sales with a 3-way split. */
  mix: Record<SaleKind, number>;
  idleS: number;
  warmupSales: number;
  /** Sales sent with the event queues paused, to weigh a queued job in Redis memory. */
  queuedSales: number;
}

export type SaleKind = 'card' | 'token' | 'split';

export interface CapacityRound extends Round {
  perSale: Counters;
  load: OpenLoopResult;
  /** Seconds from the end of the load until the last payable and webhook were done. */
  drainS: number;
}

export interface CapacityResult {
  at: string;
  loadAverage: { before: number[]; after: number[] };
  options: CapacityOptions;
  versions: { postgres: string; redis: string };
  rounds: CapacityRound[];
  redis: RedisFacts;
  /** Sales answered other than 200 approved, or webhooks and payables never done. */
  failures: number;
}

/** Settles what Postgres's statistics collector holds back: a backend flushes its counters at most every 10 s when idle. */
const STATS_FLUSH_S = 11;

export async function benchCapacity(o: CapacityOptions): Promise<CapacityResult> {
  const before = loadavg();
  const dir = mkdtempSync(join(tmpdir(), 'gw-capacity-'));
  chmodSync(dir, 0o755); // the postgres account runs the cluster in a folder under it
  const servers: PrivateServer[] = [];
  let stack: BenchStack | undefined;
  let listener: WebhookListener | undefined;
  try {
    const redisServer = await startPrivateRedisServer({ dir: join(dir, 'redis') });
    servers.push(redisServer);
    const pgServer = await startPrivatePostgresCluster({
      dir: join(dir, 'postgres'),
      durable: true,
      settings: ["shared_preload_libraries = 'pg_stat_statements'", 'pg_stat_statements.max = 10000', 'max_connections = 300'],
    });
    servers.push(pgServer);
    stack = await startBenchStack({ databaseUrl: pgServer.url, redisUrl: redisServer.url });
    listener = await WebhookListener.start(0);
    const probe = await Probe.open(stack, pgServer);
    try {
      const rig: Rig = { stack, probe, listener, bodies: await saleBodies(stack, listener, o.mix), o };
      await drive(rig, o.warmupSales, 'warm');
      const idleMemory = (await probe.snapshot()).usedMemory;
      const rounds: CapacityRound[] = [];
      for (let i = 0; i < o.rounds; i++) {
        rounds.push(await measureRound(rig, `r${i}`));
        const r = rounds[rounds.length - 1];
        process.stdout.write(
          `capacity round ${i + 1}/${o.rounds}: ${r.sales} sales at ${o.rate}/s (p99 ${r.load.p99} ms), pipeline done ${r.drainS.toFixed(1)} s after the load\n`,
        );
      }
      const redis = await weighQueuedJobs(rig, idleMemory);
      const failures = rounds.reduce((n, r) => n + r.load.non2xx + r.load.errors, 0);
      return {
        at: new Date().toISOString(),
        loadAverage: { before, after: loadavg() },
        options: o,
        versions: await probe.versions(),
        rounds,
        redis,
        failures,
      };
    } finally {
      await probe.close();
    }
  } finally {
    await listener?.close();
    await stack?.teardown();
    for (const s of servers.reverse()) await s.destroy().catch(() => undefined);
    rmSync(dir, { recursive: true, force: true });
  }
}

/** The request bodies, in the mix's proportions (a fixed repeating order, so every round has the same mix). */
async function saleBodies(stack: BenchStack, listener: WebhookListener, mix: Record<SaleKind, number>) {
  const tokens = mix.token > 0 ? await seedTokens(stack, 200) : [];
  const recipients = mix.split > 0 ? await approvedRecipients(stack, stack.merchant.merchantId, 'capacity') : [];
  const order = (Object.keys(mix) as SaleKind[]).flatMap((k) => Array<SaleKind>(mix[k]).fill(k));
  if (!order.length) throw new Error('BENCH_CAPACITY_MIX: no sale kind has a weight');
  let n = 0;
  return (run: string) => () => {
    const kind = order[n % order.length];
    const payment =
      kind === 'token'
        ? { tokenCard: tokens[n % tokens.length], cardSecurityCode: '123' }
        : kind === 'split'
          ? { ...BENCH_CARD, split: threeWaySplit(recipients) }
          : BENCH_CARD;
    return saleRequest(stack.merchant, `C-${n++}`, payment, { urlReturn: `${listener.url}?run=${run}&sent=${Date.now()}` });
  };
}

/** What a round works with: the stack, the counters, the listener, the request bodies of a run, the options. */
interface Rig {
  stack: BenchStack;
  probe: Probe;
  listener: WebhookListener;
  bodies: (run: string) => () => string;
  o: CapacityOptions;
}

/** Sends `count` sales at the rate and waits until their payables and webhooks are done. */
async function drive(
  { stack, probe, listener, bodies, o }: Rig,
  count: number,
  run: string,
): Promise<{ load: OpenLoopResult; drainS: number }> {
  const arrivals = listener.track(run, count);
  const load = await runOpenLoop(`${stack.baseUrl}/v1/receiver`, o.rate, count / o.rate, 64, bodies(run));
  const ended = Date.now();
  const delivered = await within(
    arrivals.complete.then(() => true),
    PIPELINE_TIMEOUT_MS,
  );
  if (!delivered) throw new Error(`capacity: ${count - arrivals.latencies.size} of ${count} webhooks not delivered in time`);
  await probe.pipelineDone();
  return { load, drainS: (Date.now() - ended) / 1000 };
}

async function measureRound(rig: Rig, run: string): Promise<CapacityRound> {
  const { stack, probe, o } = rig;
  await waitUntilIdle(stack);
  await probe.checkpoint();
  await sleep(STATS_FLUSH_S * 1000);
  const s0 = await probe.snapshot();
  await sleep(o.idleS * 1000);
  const s1 = await probe.snapshot();
  const { load, drainS } = await drive(rig, o.sales, run);
  // The round's dirty pages written now, so they are counted (production spreads this over its checkpoints).
  await probe.checkpoint();
  await sleep(STATS_FLUSH_S * 1000);
  const s2 = await probe.snapshot();
  const round: Round = {
    sales: o.sales,
    elapsedS: (s2.at - s1.at) / 1000,
    counted: difference(s1.counters, s2.counters),
    idleS: (s1.at - s0.at) / 1000,
    idle: difference(s0.counters, s1.counters),
  };
  return { ...round, perSale: perSale(round), load, drainS };
}

/**
 * used_memory per queued job: the event queues paused (settlement and notifier stop taking jobs),
 * `queuedSales` sales sent, their events left waiting in Redis; then the queues resume and drain.
 */
async function weighQueuedJobs({ stack, probe, listener, bodies, o }: Rig, idleBytes: number): Promise<RedisFacts> {
  await waitUntilIdle(stack);
  const connection = new Redis(stack.env.REDIS_URL as string, { maxRetriesPerRequest: null });
  const queues = Object.values(Events).map((name) => new Queue(name, { connection, prefix: stack.env.QUEUE_PREFIX }));
  try {
    // count(): waiting, paused, prioritized and delayed jobs.
    const waiting = async () => (await Promise.all(queues.map((q) => q.count()))).reduce((a, b) => a + b, 0);
    for (const q of queues) await q.pause();
    const before = { memory: (await probe.snapshot()).usedMemory, jobs: await waiting() };
    const run = 'queued';
    const arrivals = listener.track(run, o.queuedSales);
    await runOpenLoop(`${stack.baseUrl}/v1/receiver`, o.rate, o.queuedSales / o.rate, 64, bodies(run));
    await probe.outboxPublished();
    const after = { memory: (await probe.snapshot()).usedMemory, jobs: await waiting() };
    for (const q of queues) await q.resume();
    await within(
      arrivals.complete.then(() => true),
      PIPELINE_TIMEOUT_MS,
    );
    await probe.pipelineDone();
    const jobs = after.jobs - before.jobs;
    if (jobs <= 0) throw new Error('capacity: no event job waited while the queues were paused');
    return {
      bytesPerQueuedJob: (after.memory - before.memory) / jobs,
      jobsPerSale: jobs / o.queuedSales,
      queues: (await connection.keys(`${stack.env.QUEUE_PREFIX}:*:meta`)).length,
      // The queues that keep their completed jobs (events, deliveries: up to a count each).
      queuesKeepingCompleted: (await connection.keys(`${stack.env.QUEUE_PREFIX}:*:completed`)).length,
      idleBytes,
    };
  } finally {
    for (const q of queues) await q.close();
    connection.disconnect();
  }
}

/** b − a, key by key. */
function difference(a: Counters, b: Counters): Counters {
  return Object.fromEntries(Object.keys({ ...a, ...b }).map((k) => [k, (b[k] ?? 0) - (a[k] ?? 0)]));
}
