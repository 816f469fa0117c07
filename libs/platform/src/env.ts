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
  redisUrl: string;
  queuePrefix: string;
  /** Jobs in flight per pattern in a worker process, e.g. WORKER_CONCURRENCY=token.add=32,token.retrieve=64. */
  workerConcurrency: Record<string, number>;
  /** How long finished jobs stay in Redis (for the dashboard and dedup) before BullMQ drops them. */
  keepCompletedJobsS: number;
  keepFailedJobsS: number;
  dataDir: string;
  logLevel: string;
  /** Where a worker's /health and /metrics listen: loopback by default, 0.0.0.0 where probes and scrapes come from outside (Kubernetes). */
  healthHost: string;
  /** This process's name among its app's replicas (tokenizer-2, a pod's name), carried on every log line. */
  replica?: string;
}

export function readBaseConfig(r: EnvReader): BaseConfig {
  return {
    nodeEnv: r.oneOf('NODE_ENV', 'development', ['development', 'test', 'production'] as const),
    databaseUrl: r.url('DATABASE_URL', DEFAULT_DATABASE_URL, ['postgres:', 'postgresql:']),
    redisUrl: r.url('REDIS_URL', DEFAULT_REDIS_URL, ['redis:', 'rediss:']),
    queuePrefix: r.str('QUEUE_PREFIX', 'gw'),
    workerConcurrency: r.parse('WORKER_CONCURRENCY', () => parseConcurrency(r.optional('WORKER_CONCURRENCY') ?? '')) ?? {},
    keepCompletedJobsS: r.int('KEEP_COMPLETED_JOBS_S', 24 * 3600, 0, 30 * 24 * 3600),
    keepFailedJobsS: r.int('KEEP_FAILED_JOBS_S', 7 * 24 * 3600, 0, 90 * 24 * 3600),
    dataDir: r.str('DATA_DIR', '.data'),
    logLevel: r.oneOf('LOG_LEVEL', 'info', ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'] as const),
    healthHost: r.str('HEALTH_HOST', '127.0.0.1'),
    replica: r.optional('REPLICA_NAME'),
  };
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
