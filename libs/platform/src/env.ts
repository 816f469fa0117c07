import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';

/**
 * Typed reading of the environment. Every problem is collected so an operator sees all bad
 * variables in one boot failure, each named, instead of fixing them one restart at a time.
 * Values of secret variables are never echoed.
 */
export class EnvReader {
  private readonly problems: string[] = [];

  constructor(private readonly env: NodeJS.ProcessEnv = process.env) {}

  str(name: string, fallback?: string): string {
    const v = this.env[name];
    if (v !== undefined && v !== '') return v;
    if (fallback !== undefined) return fallback;
    this.problems.push(`${name} is required`);
    return '';
  }

  optional(name: string): string | undefined {
    const v = this.env[name];
    return v === undefined || v === '' ? undefined : v;
  }

  int(name: string, fallback: number, min = 0, max = Number.MAX_SAFE_INTEGER): number {
    const raw = this.env[name];
    if (raw === undefined || raw === '') return fallback;
    if (!/^\d+$/.test(raw) || Number(raw) < min || Number(raw) > max) {
      this.problems.push(`${name} must be a whole number from ${min} to ${max} (got "${raw}")`);
      return fallback;
    }
    return Number(raw);
  }

  bool(name: string, fallback: boolean): boolean {
    const raw = this.env[name];
    if (raw === undefined || raw === '') return fallback;
    if (raw === 'true' || raw === '1') return true;
    if (raw === 'false' || raw === '0') return false;
    this.problems.push(`${name} must be true or false (got "${raw}")`);
    return fallback;
  }

  url(name: string, fallback: string, protocols: string[]): string {
    const v = this.str(name, fallback);
    try {
      const u = new URL(v);
      if (!protocols.includes(u.protocol)) this.problems.push(`${name} must be a ${protocols.join(' or ')} URL`);
    } catch {
      this.problems.push(`${name} is not a valid URL`);
    }
    return v;
  }

  oneOf<T extends string>(name: string, fallback: T, allowed: readonly T[]): T {
    const v = this.str(name, fallback) as T;
    if (!allowed.includes(v)) this.problems.push(`${name} must be one of ${allowed.join(', ')} (got "${v}")`);
    return v;
  }

  /** Runs a parser that throws with a message naming the variable; records the message. */
  parse<T>(name: string, parser: () => T): T | undefined {
    try {
      return parser();
    } catch (e) {
      this.problems.push((e as Error).message.includes(name) ? (e as Error).message : `${name}: ${(e as Error).message}`);
      return undefined;
    }
  }

  problem(message: string): void {
    this.problems.push(message);
  }

  /** Throws one error listing every bad variable; call once after reading everything. */
  done(app: string): void {
    if (this.problems.length > 0) {
      throw new ConfigError(`${app}: invalid configuration:\n  - ${this.problems.join('\n  - ')}`);
    }
  }
}

export class ConfigError extends Error {
  override name = 'ConfigError';
}

export const DEFAULT_DATABASE_URL = 'postgres://postgres@127.0.0.1:5432/gateway';
export const DEFAULT_REDIS_URL = 'redis://127.0.0.1:6379';

/** What every app reads: where the data lives and how it runs. */
export interface BaseConfig {
  nodeEnv: 'development' | 'test' | 'production';
  databaseUrl: string;
  /**
   * Whether the hot path's statements go to Postgres as named (prepared) statements. Off behind a
   * pooler in transaction mode (PgBouncer 1.18), where consecutive transactions of one client may
   * land on different server connections, which do not know each other's statements.
   */
  preparedStatements: boolean;
  redis: RedisTarget;
  queuePrefix: string;
  /**
   * How many partitions each pattern's queue is cut into (QUEUE_PARTITIONS, 1–64), so a busy
   * queue spreads over a cluster's masters; 1 keeps one queue per pattern. Every app must agree.
   */
  queuePartitions: number;
  /** Jobs in flight per pattern in a worker process, e.g. WORKER_CONCURRENCY=token.add=32,token.retrieve=64. */
  workerConcurrency: Record<string, number>;
  /** Events published again under the same id within this many seconds are added once (EVENT_DEDUP_WINDOW_S). */
  eventDedupS: number;
  /** How long failed request jobs (at most an hour) and events whose attempts ran out stay in Redis (KEEP_FAILED_JOBS_S). */
  keepFailedJobsS: number;
  /**
   * An event's deliveries to its consumer before it is given up on (EVENT_RETRY_ATTEMPTS), and the
   * first retry's wait, doubling with each (EVENT_RETRY_BACKOFF_MS): the event retry budget. The
   * chaos run shortens it so that an outage outlasts it within minutes.
   */
  eventRetry: { attempts: number; backoffMs: number };
  dataDir: string;
  logLevel: string;
  /** How long the tables that grow with traffic keep their rows (RETENTION_*). */
  retention: RetentionConfig;
  /** Where a worker's /health and /metrics listen: loopback by default, 0.0.0.0 where probes and scrapes come from outside (Kubernetes). */
  healthHost: string;
  /** This process's name among its app's replicas (tokenizer-2, a pod's name), carried on every log line. */
  replica?: string;
}

export function readBaseConfig(r: EnvReader): BaseConfig {
  return {
    nodeEnv: r.oneOf('NODE_ENV', 'development', ['development', 'test', 'production'] as const),
    databaseUrl: r.url('DATABASE_URL', DEFAULT_DATABASE_URL, ['postgres:', 'postgresql:']),
    preparedStatements: r.bool('DATABASE_PREPARED_STATEMENTS', true),
    redis: readRedisTarget(r),
    queuePrefix: r.str('QUEUE_PREFIX', 'gw'),
    queuePartitions: r.int('QUEUE_PARTITIONS', 1, 1, 64),
    workerConcurrency: r.parse('WORKER_CONCURRENCY', () => parseConcurrency(r.optional('WORKER_CONCURRENCY') ?? '')) ?? {},
    eventDedupS: r.int('EVENT_DEDUP_WINDOW_S', 900, 0, 24 * 3600),
    keepFailedJobsS: r.int('KEEP_FAILED_JOBS_S', 7 * 24 * 3600, 0, 90 * 24 * 3600),
    eventRetry: { attempts: r.int('EVENT_RETRY_ATTEMPTS', 10, 1, 100), backoffMs: r.int('EVENT_RETRY_BACKOFF_MS', 1000, 10, 600_000) },
    dataDir: r.str('DATA_DIR', '.data'),
    logLevel: r.oneOf('LOG_LEVEL', 'info', ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'] as const),
    retention: readRetentionConfig(r),
    healthHost: r.str('HEALTH_HOST', '127.0.0.1'),
    replica: r.optional('REPLICA_NAME'),
  };
}

/**
 * Where Redis is: one server (REDIS_URL), or a Redis Cluster (REDIS_CLUSTER_NODES, a few of its
 * nodes as host:port; the client finds the rest). On a cluster REDIS_URL still gives the user,
 * password and TLS (`rediss:`) every node is reached with; its host and port are not used.
 */
export interface RedisTarget {
  url: string;
  clusterNodes?: { host: string; port: number }[];
}

export const REDIS_CLUSTER_NODES = 'REDIS_CLUSTER_NODES';

export function readRedisTarget(r: EnvReader): RedisTarget {
  const url = r.url('REDIS_URL', DEFAULT_REDIS_URL, ['redis:', 'rediss:']);
  const spec = r.optional(REDIS_CLUSTER_NODES);
  if (spec === undefined) return { url };
  const clusterNodes = r.parse(REDIS_CLUSTER_NODES, () => parseClusterNodes(spec));
  const db = URL.canParse(url) ? new URL(url).pathname.replace(/^\//, '') : '';
  if (db !== '' && db !== '0')
    r.problem(`REDIS_URL names database ${db}, but a Redis Cluster (${REDIS_CLUSTER_NODES}) has only database 0`);
  return { url, clusterNodes };
}

/** Parses REDIS_CLUSTER_NODES (`host:port,host:port`); throws naming the variable. */
export function parseClusterNodes(spec: string): { host: string; port: number }[] {
  const entries = spec
    .split(',')
    .map((e) => e.trim())
    .filter(Boolean);
  if (entries.length === 0) throw new Error(`${REDIS_CLUSTER_NODES} must list at least one host:port`);
  return entries.map((entry) => {
    const m = /^(\[[0-9a-f:.]+\]|[a-z0-9.-]+):(\d{1,5})$/i.exec(entry);
    const port = m ? Number(m[2]) : 0;
    if (!m || port < 1 || port > 65535) throw new Error(`${REDIS_CLUSTER_NODES} entries must look like host:port (got "${entry}")`);
    return { host: m[1].replace(/^\[|\]$/g, ''), port };
  });
}

function parseConcurrency(spec: string): Record<string, number> {
  const out: Record<string, number> = {};
  for (const entry of spec
    .split(',')
    .map((e) => e.trim())
    .filter(Boolean)) {
    const m = /^([a-z0-9._-]+)=(\d{1,4})$/i.exec(entry);
    if (!m || Number(m[2]) < 1) throw new Error(`WORKER_CONCURRENCY entries must look like token.add=32 (got "${entry}")`);
    out[m[1]] = Number(m[2]);
  }
  return out;
}

/**
 * Key material variable: from the environment, or in development only from the quick start's
 * `${DATA_DIR}/dev-keys.env`. Outside development a missing key is a boot failure: an app must
 * never run on keys nobody configured (and never invent keys it would then lose).
 */
export function readKeyVariable(r: EnvReader, base: BaseConfig, name: string): string {
  const fromEnv = r.optional(name);
  if (fromEnv) return fromEnv;
  if (base.nodeEnv === 'development') {
    const dev = readDevKeys(base.dataDir)[name];
    if (dev) return dev;
    r.problem(`${name} is required (in development, run "npm start" once to generate ${join(base.dataDir, 'dev-keys.env')})`);
  } else {
    r.problem(`${name} is required in ${base.nodeEnv}`);
  }
  return '';
}

export function devKeysPath(dataDir: string): string {
  return join(dataDir, 'dev-keys.env');
}

export function readDevKeys(dataDir: string): Record<string, string> {
  const file = devKeysPath(dataDir);
  if (!existsSync(file)) return {};
  const out: Record<string, string> = {};
  for (const line of readFileSync(file, 'utf8').split('\n')) {
    const m = /^\s*([A-Z_][A-Z0-9_]*)\s*=\s*(.*?)\s*$/.exec(line);
    if (m) out[m[1]] = m[2];
  }
  return out;
}

const UNIT_MS = { ms: 1, s: 1_000, m: 60_000, h: 3_600_000, d: 86_400_000 } as const;
const DAY_MS = UNIT_MS.d;

/**
 * A duration as `<whole number><unit>`, the unit one of ms, s, m, h, d (`5d`, `36h`, `2s`), in
 * milliseconds, from `minMs` to `maxMs`; throws naming `name` otherwise.
 */
export function parseDurationMs(name: string, raw: string, minMs: number, maxMs: number): number {
  const m = /^(\d{1,9})(ms|s|m|h|d)$/.exec(raw.trim());
  const ms = m ? Number(m[1]) * UNIT_MS[m[2] as keyof typeof UNIT_MS] : NaN;
  if (!(ms >= minMs && ms <= maxMs))
    throw new Error(`${name} must be a duration such as 5d, 36h or 90s, from ${minMs / 1000}s to ${maxMs / DAY_MS}d (got "${raw}")`);
  return ms;
}

/**
 * How long each table that grows with traffic keeps its rows (docs/operations/retention.md),
 * and how the pruning passes run. Ages in milliseconds.
 */
export interface RetentionConfig {
  /** RETENTION_IDEMPOTENCY_KEYS: at least 24 h, the replay window the API promises. */
  idempotencyKeysMs: number;
  /** RETENTION_OUTBOX: published outbox rows (an unpublished one is never deleted). */
  outboxMs: number;
  /** RETENTION_SANDBOX_CALLS: the sandbox acquirer's books (an authorization's calls go together). */
  sandboxCallsMs: number;
  /** RETENTION_DELIVERY_ATTEMPTS: whole days (the table is partitioned by day). */
  deliveryAttemptsMs: number;
  /** RETENTION_DELIVERIES: finished deliveries, by last change; at least the attempts' age. */
  deliveriesMs: number;
  /** RETENTION_CONSOLE_SESSIONS: console sign-ins ended or expired this long ago. */
  consoleSessionsMs: number;
  /** RETENTION_PORTAL_LINKS: portal links expired or revoked this long ago. */
  portalLinksMs: number;
  /** RETENTION_AUDIT: audit events older than this (at least 30 days, what prune_audit_events() keeps whatever it is asked). */
  auditMs: number;
  /** RETENTION_INTERVAL: how often each app runs its pass. */
  intervalMs: number;
  /** RETENTION_BATCH: rows deleted per short transaction. */
  batchRows: number;
}

/** Reads the RETENTION_* settings, each checked, with a problem naming the variable. */
export function readRetentionConfig(r: EnvReader): RetentionConfig {
  const age = (name: string, fallback: string, minMs: number, fallbackMs: number): number =>
    r.parse(name, () => parseDurationMs(name, r.str(name, fallback), minMs, 3650 * DAY_MS)) ?? fallbackMs;
  const cfg: RetentionConfig = {
    idempotencyKeysMs: age('RETENTION_IDEMPOTENCY_KEYS', '24h', DAY_MS, DAY_MS),
    outboxMs: age('RETENTION_OUTBOX', '7d', UNIT_MS.h, 7 * DAY_MS),
    sandboxCallsMs: age('RETENTION_SANDBOX_CALLS', '90d', DAY_MS, 90 * DAY_MS),
    deliveryAttemptsMs: age('RETENTION_DELIVERY_ATTEMPTS', '30d', DAY_MS, 30 * DAY_MS),
    deliveriesMs: age('RETENTION_DELIVERIES', '90d', DAY_MS, 90 * DAY_MS),
    consoleSessionsMs: age('RETENTION_CONSOLE_SESSIONS', '7d', UNIT_MS.h, 7 * DAY_MS),
    portalLinksMs: age('RETENTION_PORTAL_LINKS', '30d', UNIT_MS.h, 30 * DAY_MS),
    auditMs: age('RETENTION_AUDIT', '365d', 30 * DAY_MS, 365 * DAY_MS),
    intervalMs:
      r.parse('RETENTION_INTERVAL', () => parseDurationMs('RETENTION_INTERVAL', r.str('RETENTION_INTERVAL', '10m'), 100, DAY_MS)) ??
      600_000,
    batchRows: r.int('RETENTION_BATCH', 1000, 1, 50_000),
  };
  if (cfg.deliveryAttemptsMs % DAY_MS !== 0)
    r.problem(`RETENTION_DELIVERY_ATTEMPTS must be whole days (the attempts are kept in daily partitions), e.g. 30d`);
  if (cfg.deliveriesMs < cfg.deliveryAttemptsMs)
    r.problem(`RETENTION_DELIVERIES must be at least RETENTION_DELIVERY_ATTEMPTS (a delivery outlives its attempts)`);
  return cfg;
}
