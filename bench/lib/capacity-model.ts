/**
 * The capacity model's arithmetic: from what the `capacity` bench group counted (CPU seconds,
 * Redis commands, Postgres statements, WAL bytes, rows, pages, over a round of sales and over an
 * idle window before it) to per-sale costs, and from those to replicas, Redis shards and Postgres
 * sizes at a given rate. Pure: no I/O, so it is unit-tested (capacity-model.spec.ts) and the
 * figures in docs/capacity.md are this code's output.
 *
 * Counters are flat: `cpu.api` (s), `cpu.redis-main` (s), `redis.cmd.evalsha` (calls, those
 * run inside scripts included), `pg.stmt.<statement>` (calls),
 * `pg.exec-ms`, `pg.commits`, `pg.wal-bytes`, `pg.wal-syncs`, `pg.pages-written`,
 * `pg.rows.<table>` (rows inserted, updated or deleted), `cpu.postgres` (s).
 */
export type Counters = Record<string, number>;

/** One measured round: `sales` sales over `elapsedS`, and the same counters over an idle window. */
export interface Round {
  sales: number;
  elapsedS: number;
  counted: Counters;
  idleS: number;
  idle: Counters;
}

/**
 * What one sale costs: the round's counters less what the stack spends idle over as long (timers,
 * pollers: a fixed cost per process, not per sale), divided by the sales. Never below zero: an
 * idle window busier than the round (noise) counts as nothing, not as a saving.
 */
export function perSale(round: Round): Counters {
  if (round.sales <= 0) throw new Error('a round without sales has no per-sale cost');
  const out: Counters = {};
  for (const key of new Set([...Object.keys(round.counted), ...Object.keys(round.idle)])) {
    const idle = round.idleS > 0 ? ((round.idle[key] ?? 0) * round.elapsedS) / round.idleS : 0;
    out[key] = Math.max(0, (round.counted[key] ?? 0) - idle) / round.sales;
  }
  return out;
}

export interface Range {
  min: number;
  max: number;
  mean: number;
}

/** Per key, the range over the rounds (a key a round lacks counts as 0 there). */
export function ranges(rounds: Counters[]): Record<string, Range> {
  if (!rounds.length) throw new Error('no rounds');
  const out: Record<string, Range> = {};
  for (const key of new Set(rounds.flatMap((r) => Object.keys(r)))) {
    const values = rounds.map((r) => r[key] ?? 0);
    out[key] = { min: Math.min(...values), max: Math.max(...values), mean: values.reduce((a, b) => a + b, 0) / values.length };
  }
  return out;
}

/** The sum of the keys under a prefix (`redis.cmd.` → every command). */
export const sumOf = (c: Counters, prefix: string): number =>
  Object.entries(c).reduce((n, [k, v]) => (k.startsWith(prefix) ? n + v : n), 0);

/** Per-sale figures the model uses (the worst round's, so the plan errs on the safe side). */
export interface SaleCost {
  /** CPU ms per sale of each app process. */
  appCpuMs: Record<string, number>;
  redisCpuMs: number;
  /** Of which Redis's main thread: what one shard's single-threaded limit applies to. */
  redisMainCpuMs: number;
  /** Script calls (BullMQ's Lua scripts: each one moves a job). */
  redisScriptCalls: number;
  /** Commands executed, those run inside scripts included. */
  redisCommands: number;
  postgresCpuMs: number;
  pgStatements: number;
  pgCommits: number;
  /** Time the statements spent executing, ms (what a server connection is busy for). */
  pgExecMs: number;
  walBytes: number;
  walSyncs: number;
  pagesWritten: number;
  rowsWritten: number;
}

export const APPS = ['api', 'tokenizer', 'settlement', 'notifier'] as const;
const SCRIPT_COMMANDS = ['evalsha', 'eval', 'evalsha_ro', 'eval_ro', 'fcall', 'fcall_ro'];
/** Script calls among the Redis commands (BullMQ's Lua scripts: each moves a job). */
export const scriptCalls = (c: Counters): number => SCRIPT_COMMANDS.reduce((n, k) => n + (c[`redis.cmd.${k}`] ?? 0), 0);

/** The worst (max) per-sale figure over the rounds, of each thing the model needs. */
export function saleCost(rounds: Counters[]): SaleCost {
  const worst = (f: (c: Counters) => number) => Math.max(...rounds.map(f));
  return {
    appCpuMs: Object.fromEntries(APPS.map((a) => [a, worst((c) => (c[`cpu.${a}`] ?? 0) * 1000)])),
    redisCpuMs: worst((c) => (c['cpu.redis'] ?? 0) * 1000),
    redisMainCpuMs: worst((c) => (c['cpu.redis-main'] ?? 0) * 1000),
    redisScriptCalls: worst(scriptCalls),
    redisCommands: worst((c) => sumOf(c, 'redis.cmd.')),
    postgresCpuMs: worst((c) => (c['cpu.postgres'] ?? 0) * 1000),
    pgStatements: worst((c) => sumOf(c, 'pg.stmt.')),
    pgCommits: worst((c) => c['pg.commits'] ?? 0),
    pgExecMs: worst((c) => c['pg.exec-ms'] ?? 0),
    walBytes: worst((c) => c['pg.wal-bytes'] ?? 0),
    walSyncs: worst((c) => c['pg.wal-syncs'] ?? 0),
    pagesWritten: worst((c) => c['pg.pages-written'] ?? 0),
    rowsWritten: worst((c) => sumOf(c, 'pg.rows.')),
  };
}

/** The planning assumptions: not measured, chosen, and printed with the model. */
export interface Assumptions {
  /** Busiest a Node replica (one event loop, about one core) is planned to run. */
  appUtilisation: number;
  /** Busiest one Redis shard's main thread is planned to run. */
  redisUtilisation: number;
  /** Busiest the Postgres primary's cores are planned to run. */
  postgresUtilisation: number;
  /** Replicas of each app at least (one can fail or be redeployed). */
  minReplicas: number;
  /** The largest primary planned for, in cores. */
  primaryMaxCores: number;
  /** WAL one primary (and its streaming replicas' single-threaded replay) is planned to sustain, MB/s. */
  walMaxMBps: number;
  /** Server connections per connection busy executing (transaction time beyond execution: round trips, the app's own work). */
  connectionsPerBusy: number;
  /** A consumer stalled this long must fit its backlog in Redis memory. */
  backlogS: number;
  /** Completed event jobs each queue keeps (removeOnComplete count, libs/messaging). */
  keptCompletedPerQueue: number;
}

export const DEFAULT_ASSUMPTIONS: Assumptions = {
  appUtilisation: 0.6,
  redisUtilisation: 0.5,
  postgresUtilisation: 0.6,
  minReplicas: 2,
  primaryMaxCores: 64,
  walMaxMBps: 150,
  connectionsPerBusy: 3,
  backlogS: 300,
  keptCompletedPerQueue: 10_000,
};

/** What the Redis side measured besides per-sale costs. */
export interface RedisFacts {
  /** used_memory per job waiting in a queue (measured with the event queues paused). */
  bytesPerQueuedJob: number;
  /** Event jobs one sale puts on queues. */
  jobsPerSale: number;
  /** Queues the stack uses (BullMQ: each queue is one hash slot, so one shard). */
  queues: number;
  /** Of which those that keep completed jobs (up to keptCompletedPerQueue each). */
  queuesKeepingCompleted: number;
  /** used_memory of the idle stack. */
  idleBytes: number;
}

export interface Plan {
  rate: number;
  replicas: Record<string, number>;
  appCores: Record<string, number>;
  redis: { scriptCallsPerS: number; commandsPerS: number; mainThreadCores: number; masters: number; memoryMB: number };
  postgres: {
    statementsPerS: number;
    commitsPerS: number;
    cores: number;
    walMBps: number;
    iops: number;
    rowsPerS: number;
    serverConnections: number;
    clientConnections: number;
    primaries: number;
  };
  /** Components whose single unit (one replica, one shard, one primary) this rate exceeds, first to saturate first. */
  saturated: string[];
}

/** Where one unit of each component is full, in sales/s (the rate at which it reaches its planned utilisation). */
export function ceilings(cost: SaleCost, a: Assumptions = DEFAULT_ASSUMPTIONS): Record<string, number> {
  const at = (msPerSale: number, cores: number, utilisation: number) =>
    msPerSale > 0 ? (cores * utilisation * 1000) / msPerSale : Infinity;
  return {
    ...Object.fromEntries(APPS.map((app) => [`${app} replica`, at(cost.appCpuMs[app], 1, a.appUtilisation)])),
    'Redis shard (main thread)': at(cost.redisMainCpuMs, 1, a.redisUtilisation),
    'Postgres primary (CPU)': at(cost.postgresCpuMs, a.primaryMaxCores, a.postgresUtilisation),
    'Postgres primary (WAL)': cost.walBytes > 0 ? (a.walMaxMBps * 1e6) / cost.walBytes : Infinity,
  };
}

/** Connections each replica's pool opens (DB_POOL_SIZE defaults). */
export const POOL_SIZES: Record<string, number> = { api: 10, tokenizer: 16, settlement: 5, notifier: 20 };

export function plan(rate: number, cost: SaleCost, redis: RedisFacts, a: Assumptions = DEFAULT_ASSUMPTIONS): Plan {
  const cores = (msPerSale: number, utilisation: number) => (rate * msPerSale) / 1000 / utilisation;
  const appCores = Object.fromEntries(APPS.map((app) => [app, cores(cost.appCpuMs[app], a.appUtilisation)]));
  const replicas = Object.fromEntries(APPS.map((app) => [app, Math.max(a.minReplicas, Math.ceil(appCores[app]))]));
  const redisMain = cores(cost.redisMainCpuMs, a.redisUtilisation);
  const jobsPerS = rate * redis.jobsPerSale;
  const memoryBytes =
    redis.idleBytes + redis.bytesPerQueuedJob * (jobsPerS * a.backlogS + redis.queuesKeepingCompleted * a.keptCompletedPerQueue);
  const pgCores = cores(cost.postgresCpuMs, a.postgresUtilisation);
  const walMBps = (rate * cost.walBytes) / 1e6;
  const c = ceilings(cost, a);
  return {
    rate,
    replicas,
    appCores,
    redis: {
      scriptCallsPerS: rate * cost.redisScriptCalls,
      commandsPerS: rate * cost.redisCommands,
      mainThreadCores: redisMain,
      masters: Math.max(1, Math.ceil(redisMain)),
      memoryMB: memoryBytes / 1e6,
    },
    postgres: {
      statementsPerS: rate * cost.pgStatements,
      commitsPerS: rate * cost.pgCommits,
      cores: pgCores,
      walMBps,
      iops: rate * (cost.walSyncs + cost.pagesWritten),
      rowsPerS: rate * cost.rowsWritten,
      serverConnections: Math.max(10, Math.ceil(((rate * cost.pgExecMs) / 1000) * a.connectionsPerBusy)),
      clientConnections: APPS.reduce((n, app) => n + replicas[app] * POOL_SIZES[app], 0),
      primaries: Math.max(1, Math.ceil(pgCores / a.primaryMaxCores), Math.ceil(walMBps / a.walMaxMBps)),
    },
    saturated: Object.entries(c)
      .filter(([, ceiling]) => rate > ceiling)
      .sort(([, x], [, y]) => x - y)
      .map(([name]) => name),
  };
}

/** The component whose single unit fills first as the rate grows, and at what rate. */
export function firstToSaturate(cost: SaleCost, a: Assumptions = DEFAULT_ASSUMPTIONS): { name: string; rate: number }[] {
  return Object.entries(ceilings(cost, a))
    .sort(([, x], [, y]) => x - y)
    .map(([name, rate]) => ({ name, rate }));
}

/**
 * A name for a statement that says what it does to which table, without its values (which are
 * placeholders in pg_stat_statements anyway): the tables it writes, in order ("UPDATE
 * transactions + INSERT INTO outbox"), else the table it reads ("SELECT transactions"), else its
 * first word ("BEGIN").
 */
export function statementLabel(query: string): string {
  const q = query.replace(/\s+/g, ' ').trim();
  const writes = [...q.matchAll(/(?<!\bFOR )\b(INSERT INTO|UPDATE|DELETE FROM)\s+("?[\w.]+"?)/gi)]
    .map((m) => `${m[1].toUpperCase()} ${m[2].replace(/"/g, '')}`)
    .filter((w) => !/ SET$/i.test(w));
  if (writes.length) return [...new Set(writes)].join(' + ');
  const read = [...q.matchAll(/\b(?:FROM|JOIN)\s+("?[\w.]+"?)/gi)]
    .map((m) => m[1].replace(/"/g, ''))
    .find((t) => !/^(unnest|lateral)$/i.test(t));
  const verb = (/^(\w+)/.exec(q)?.[1] ?? '?').toUpperCase();
  return read && (verb === 'SELECT' || verb === 'WITH') ? `SELECT ${read}` : verb;
}
