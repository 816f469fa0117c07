import { randomBytes } from 'node:crypto';
import { ChildProcess } from 'node:child_process';
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { connectRedis, deleteKeys, EnvReader, readRedisTarget, type RedisConnection, type RedisUse, scanKeys } from '@app/platform';
import { Client } from 'pg';
import {
  DEFAULT_DATABASE_URL,
  DEFAULT_REDIS_URL,
  dropDatabase,
  merchantInternalId,
  onLoopbackPort,
  withDatabase,
} from '../../scripts/lib/database';
import { generateKeys } from '../../scripts/lib/dev-keys';
import {
  AppName,
  APP_NAMES,
  LaunchedApp,
  launchApp,
  migrateDatabase,
  operatorCliJson,
  stopApp,
  waitForHealth,
} from '../../scripts/lib/launcher';
import { bootstrapAdmin } from '../../scripts/lib/operators';
import { freePort, PrivateServer, startPgBouncer } from '../../scripts/lib/local-servers';
import { GATEWAY_ROLES } from '../../libs/persistence/src/role-catalogue';
import { RATE_LIMIT_RANGE } from '../../libs/persistence/src/merchants/merchant-rows';
import { repoRoot, waitUntil } from '../../scripts/lib/processes';

export interface BenchStack {
  baseUrl: string;
  /** The console app's URL (/console, /portal, /admin). */
  consoleUrl: string;
  /** As merchant:create printed it (merchantId is the public id): what envelopes carry. */
  merchant: { merchantId: string; merchantKey: string };
  /** The merchant's internal id (UUID): what jobs and merchant_id columns hold. */
  merchantInternalId: string;
  env: NodeJS.ProcessEnv;
  apps: BenchApp[];
  /** One more api process on the same database and Redis prefix, with `env` over the stack's; stopped by teardown. */
  startApi(label: string, env: NodeJS.ProcessEnv): Promise<BenchApp>;
  teardown(): Promise<void>;
}

export interface BenchApp {
  name: string;
  port: number;
  proc: ChildProcess;
  exited: Promise<void>;
}

/** BENCH_POSTGRES: the apps reach Postgres straight (default) or through a PgBouncer of the bench's own in transaction mode. */
export function benchPostgres(): 'direct' | 'pgbouncer' {
  const through = process.env.BENCH_POSTGRES ?? 'direct';
  if (through !== 'direct' && through !== 'pgbouncer') throw new Error(`BENCH_POSTGRES must be direct or pgbouncer (got "${through}")`);
  return through;
}

/**
 * The whole gateway as deployed (all four apps, default logging), on a database and Redis key
 * prefix of the bench's own, so a run measures a clean vault and leaves nothing behind. `servers`:
 * a Postgres and Redis other than DATABASE_URL and REDIS_URL (the capacity group's private ones).
 * With BENCH_POSTGRES=pgbouncer the apps and the CLI go through a PgBouncer of the bench's own (transaction
 * mode, DATABASE_PREPARED_STATEMENTS=false unless set), the migrations and the seeding straight.
 */
export async function startBenchStack(servers: { databaseUrl?: string; redisUrl?: string } = {}): Promise<BenchStack> {
  const root = repoRoot();
  const runId = Date.now().toString(36);
  const databaseUrl = withDatabase(servers.databaseUrl ?? process.env.DATABASE_URL ?? DEFAULT_DATABASE_URL, `gw_bench_${runId}`);
  const redisUrl = servers.redisUrl ?? process.env.REDIS_URL ?? DEFAULT_REDIS_URL;
  const queuePrefix = `gwb${randomBytes(3).toString('hex')}`;
  const logsDir = join(root, 'bench', '.logs', runId);
  mkdirSync(logsDir, { recursive: true });
  const pooler =
    benchPostgres() === 'pgbouncer'
      ? await startPgBouncer({
          dir: join(logsDir, 'pgbouncer'),
          upstream: databaseUrl,
          users: [decodeURIComponent(new URL(databaseUrl).username) || 'postgres', ...GATEWAY_ROLES],
        })
      : undefined;
  const env = benchEnv(databaseUrl, pooler, redisUrl, queuePrefix, logsDir);
  try {
    await migrateDatabase(root, env, 60_000);
    // The bench's CLI calls (runCli with stack.env) act as this admin of the run's own database.
    env.GATEWAY_OPERATOR_TOKEN = (await bootstrapAdmin(root, env, 'bench-admin')).token;
    await seedHistory(databaseUrl, Number(process.env.BENCH_HISTORY ?? 200_000));
  } catch (e) {
    await pooler?.destroy();
    throw e;
  }

  const { launched, apps, spawnApp } = benchApps(root, env, logsDir);
  // The pipeline a sale goes through, and the console; the admin app (operator commands) takes no part in it.
  for (const name of APP_NAMES.filter((n) => n !== 'admin')) await spawnApp(name, name);
  const teardown = async () => {
    // However long they take: a profiled app writes its profile on the way out.
    for (const app of [...launched].reverse()) await stopApp(app, { graceMs: Infinity });
    await pooler?.destroy();
    await dropDatabase(databaseUrl).catch(() => undefined);
    await deleteBenchKeys(env, queuePrefix);
  };
  try {
    await Promise.all(launched.map((app) => waitForHealth(app, 60_000, 250)));
    const merchant = await createBenchMerchant(env, 'bench');
    const merchantInternalId = await internalIdOf(env, merchant.merchantId);
    const api = apps.find((a) => a.name === 'api')!;
    const consoleApp = apps.find((a) => a.name === 'console')!;
    const startApi = async (label: string, extra: NodeJS.ProcessEnv) => {
      const app = await spawnApp('api', label, extra);
      await waitForHealth(app, 60_000, 250);
      return apps[launched.indexOf(app)];
    };
    return {
      baseUrl: `http://127.0.0.1:${api.port}`,
      consoleUrl: `http://127.0.0.1:${consoleApp.port}`,
      merchant: { merchantId: merchant.merchantId, merchantKey: merchant.merchantKey },
      merchantInternalId,
      env,
      apps,
      startApi,
      teardown,
    };
  } catch (e) {
    await teardown();
    throw e;
  }
}

/** The apps' environment: the run's database (through the pooler if any), Redis prefix, data folder and fresh keys. */
function benchEnv(
  databaseUrl: string,
  pooler: PrivateServer | undefined,
  redisUrl: string,
  queuePrefix: string,
  logsDir: string,
): NodeJS.ProcessEnv {
  return {
    ...process.env,
    NODE_ENV: 'production',
    DATABASE_URL: pooler ? onLoopbackPort(databaseUrl, pooler.port) : databaseUrl,
    ...(pooler
      ? { MIGRATION_DATABASE_URL: databaseUrl, DATABASE_PREPARED_STATEMENTS: process.env.DATABASE_PREPARED_STATEMENTS ?? 'false' }
      : {}),
    REDIS_URL: redisUrl,
    // REDIS_CLUSTER_NODES, when set, reaches the apps with the rest of process.env.
    QUEUE_PREFIX: queuePrefix,
    LOG_LEVEL: process.env.BENCH_LOG_LEVEL ?? 'info',
    DATA_DIR: join(logsDir, 'data'),
    // The webhooks bench listens on loopback, which the notifier refuses unless allowed; harmless
    // for the other apps, which do not read it. A production notifier refuses to open loopback,
    // so the notifier alone runs as NODE_ENV=test (which, like production, requires every key: the
    // apps' code treats the two alike otherwise).
    WEBHOOK_ALLOW_NETWORKS: '127.0.0.0/8',
    ...generateKeys(),
  };
}

/** Launches apps of the stack: `launched` and `apps` side by side (apps[i] is what the scenarios see of launched[i]). */
function benchApps(
  root: string,
  env: NodeJS.ProcessEnv,
  logsDir: string,
): {
  launched: LaunchedApp[];
  apps: BenchApp[];
  spawnApp: (name: AppName, label: string, extra?: NodeJS.ProcessEnv) => Promise<LaunchedApp>;
} {
  const launched: LaunchedApp[] = [];
  const apps: BenchApp[] = [];
  const spawnApp = async (name: AppName, label: string, extra: NodeJS.ProcessEnv = {}): Promise<LaunchedApp> => {
    // BENCH_PROFILE_DIR: every app writes a V8 CPU profile there when it stops (profile before tuning).
    const profile = process.env.BENCH_PROFILE_DIR
      ? ['--cpu-prof', '--cpu-prof-dir', process.env.BENCH_PROFILE_DIR, '--cpu-prof-name', `${label}.cpuprofile`]
      : [];
    // Each app as its own database role, with its bounded statements: what production runs. The
    // notifier runs as NODE_ENV=test: the bench's listener is on loopback, which a production
    // notifier refuses to allow. The apps write their logs straight into files: piping them
    // through this process, which is busy generating load, would stall the apps' log writes.
    const app = launchApp({
      root,
      name,
      label,
      env: { ...env, ...extra, ...(name === 'notifier' ? { NODE_ENV: 'test' } : {}) },
      port: await freePort(),
      logFile: join(logsDir, `${label}.log`),
      nodeArgs: profile,
    });
    launched.push(app);
    apps.push({ name: label, port: app.port, proc: app.proc, exited: app.exited.then(() => undefined) });
    return app;
  };
  return { launched, apps, spawnApp };
}

/**
 * A gateway in service holds history, and its planner knows it: without it, the hot statements
 * are planned against a table Postgres believes holds a few rows (a fresh table is not analyzed
 * before autovacuum's first minute), hash joins that scan the whole table grow with every sale of
 * the run, and the bench measures an artifact no deployment lives with past its first minutes.
 * So the bench's database starts with `BENCH_HISTORY` settled sales of another merchant (see
 * seedSales), one a second apart, analyzed.
 */
async function seedHistory(databaseUrl: string, rows: number): Promise<void> {
  if (rows <= 0) return;
  const db = new Client({ connectionString: databaseUrl });
  await db.connect();
  try {
    // 1000000008: a valid public id (Luhn); merchant:create draws again should it ever draw this one.
    // It never receives a webhook: its sealed secret is a placeholder that would not open.
    await db.query(
      `INSERT INTO merchants (id, public_id, name, key_hash, webhook_secrets_kek_id, webhook_secret_sealed) VALUES ($1, '1000000008', 'bench history', '\\x00', 'unused', '\\x00')`,
      [HISTORY_MERCHANT],
    );
    await seedSales(db, rows, 1);
    await db.query('ANALYZE');
  } finally {
    await db.end();
  }
}

/** The merchant the bench's history belongs to (seedHistory creates it). */
export const HISTORY_MERCHANT = '00000000-0000-4000-8000-00000000b00c';

/**
 * `count` settled sales of the history merchant, the newest `spacingS` seconds ago and each older
 * one `spacingS` before the next, with what the real writes leave of a sale once the retention
 * rules have run (docs/operations/retention.md): the transaction (captured), its settlement and
 * the merchant's payable (the ledger, kept); its published outbox event only within 7 days, its
 * sandbox acquirer call only within 90 days (the default ages). Set-based, a million sales per
 * statement; `progress` hears after each.
 */
export async function seedSales(db: Client, count: number, spacingS: number, progress?: (done: number) => void): Promise<void> {
  const CHUNK = 1_000_000;
  for (let from = 1; from <= count; from += CHUNK) {
    const to = Math.min(count, from + CHUNK - 1);
    await db.query(
      `WITH t AS (
         INSERT INTO transactions (id, merchant_id, reference, operation, status, status_version, acquirer, method, instalments, currency, amount,
           captured_amount, masked_card, brand, processor, details, created_at, updated_at)
         SELECT id, $1, 'H-' || g, 3, 8, 2, 26, 1, 1, '986', 150000, 150000, '411111******1111', 'visa',
           jsonb_build_object('tid', tid, 'nsu', '000000000', 'authorizationCode', '000000', 'returnCode', '00', 'returnMessage', 'Approved'),
           '{"billing":{"name":"History"}}', at, at
         FROM (SELECT g, gen_random_uuid() AS id, upper(substr(md5(g::text || clock_timestamp()::text), 1, 20)) AS tid,
                 now() - make_interval(secs => g * $4::float8) AS at
               FROM generate_series($2::int, $3::int) AS g) x
         RETURNING id, merchant_id, amount, created_at, processor->>'tid' AS tid
       ), s AS (
         INSERT INTO settlements (transaction_id, merchant_id, gross, fee, instalments, split, captured_on)
         SELECT id, merchant_id, amount, 3000, 1, '[]', created_at::date FROM t
         RETURNING transaction_id, merchant_id, gross, fee, captured_on
       ), p AS (
         INSERT INTO payables (transaction_id, merchant_id, kind, instalment, due_date, gross, fee, net)
         SELECT transaction_id, merchant_id, 'capture', 1, captured_on + 30, gross, fee, gross - fee FROM s
       ), o AS (
         INSERT INTO outbox (id, event, aggregate_id, payload, created_at, published_at)
         SELECT gen_random_uuid(), 'transaction.captured', id, '{}', created_at, created_at FROM t WHERE created_at > now() - interval '7 days'
       ), c AS (
         INSERT INTO sandbox_calls (operation_key, kind, capture, masked_pan, amount, tid, result, created_at)
         SELECT 'sale-' || id, 'authorize', true, '411111******1111', amount, tid,
           jsonb_build_object('outcome', 'approved', 'returnCode', '00', 'returnMessage', 'Approved', 'tid', tid, 'nsu', '000000000'), created_at
         FROM t WHERE created_at > now() - interval '90 days'
       )
       SELECT count(*) FROM t`,
      [HISTORY_MERCHANT, from, to, spacingS],
    );
    progress?.(to);
  }
}

/**
 * Waits until the gateway has finished what the last run left behind: every outbox event
 * published and no queue job waiting or running (settlement, webhooks). A run measured while the
 * previous one's backlog drains (or while the bare baseline's run starved it) measures that
 * transient, not the gateway at the load it is given.
 */
export async function waitUntilIdle(stack: BenchStack, timeoutMs = 120_000): Promise<void> {
  const db = new Client({ connectionString: stack.env.DATABASE_URL });
  const redis = benchRedis(stack.env);
  await db.connect();
  try {
    const prefix = stack.env.QUEUE_PREFIX as string;
    const busy = async () => {
      const [{ n }] = (await db.query<{ n: number }>('SELECT count(*)::int AS n FROM outbox WHERE published_at IS NULL')).rows;
      // Every master of a cluster; a queue's keys all live on the node that holds its meta key.
      let jobs = 0;
      for await (const { node, keys } of scanKeys(redis, `${prefix}:*:meta`)) {
        for (const q of keys.map((k) => k.slice(0, -':meta'.length))) {
          jobs += (await node.llen(`${q}:wait`)) + (await node.llen(`${q}:active`)) + (await node.zcard(`${q}:prioritized`));
        }
      }
      return n + jobs;
    };
    await waitUntil("the previous run's outbox events and jobs", async () => (await busy()) === 0, timeoutMs, 200);
  } finally {
    redis.disconnect();
    await db.end();
  }
}

/**
 * A merchant of the bench's own (merchant:create with `extra` options), with rate limits far above
 * any load this machine can make: the bench measures the gateway, and a 429 is not a sale. The
 * limiter still counts every request (the `limiter` group measures that cost), it just never refuses.
 */
export async function createBenchMerchant(
  env: NodeJS.ProcessEnv,
  name: string,
  extra: string[] = [],
): Promise<{ merchantId: string; merchantKey: string } & Record<string, unknown>> {
  const merchant = await runCli<{ merchantId: string; merchantKey: string }>(env, ['merchant:create', '--name', name, ...extra]);
  const most = String(RATE_LIMIT_RANGE.max);
  await runCli(env, ['merchant:set-limits', '--merchant', merchant.merchantId, '--reads', most, '--writes', most]);
  return merchant;
}

/** The internal id (UUID) of the merchant with this public id (what merchant:create printed). */
export const internalIdOf = (env: NodeJS.ProcessEnv, publicId: string): Promise<string> => merchantInternalId(env.DATABASE_URL!, publicId);

/** The operator CLI (as gateway_operator) against the bench stack's database; its one JSON document on stdout. */
export function runCli<T>(env: NodeJS.ProcessEnv, args: string[]): Promise<T> {
  return operatorCliJson<T>(repoRoot(), args, env, 30_000);
}

/** The bench stack's Redis (one server, or the cluster of REDIS_CLUSTER_NODES), as the apps reach it. */
export function benchRedis(env: NodeJS.ProcessEnv, use: RedisUse = {}): RedisConnection {
  const r = new EnvReader(env);
  const target = readRedisTarget(r);
  r.done('bench');
  return connectRedis(target, use);
}

async function deleteBenchKeys(env: NodeJS.ProcessEnv, prefix: string): Promise<void> {
  const redis = benchRedis(env);
  try {
    await deleteKeys(redis, `${prefix}:*`);
  } finally {
    redis.disconnect();
  }
}
