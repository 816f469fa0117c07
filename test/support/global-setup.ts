import { randomBytes } from 'node:crypto';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { dropDatabase, onLoopbackPort, redactUrl, withDatabase } from '../../scripts/lib/database';
import { generateKeys } from '../../scripts/lib/dev-keys';
import { migrateDatabase } from '../../scripts/lib/launcher';
import { startPgBouncer } from '../../scripts/lib/local-servers';
import { startPrivateRedisCluster } from '../../scripts/lib/redis-cluster';
import { GATEWAY_ROLES } from '../../libs/persistence/src/role-catalogue';
import { bootstrapAdmin } from '../../scripts/lib/operators';
import { migrateEntry, repoRoot } from '../../scripts/lib/processes';
import { resolveInfra } from './infra';
import { RUN_STATE, TestRun } from './run-state';

/**
 * Once per jest run, before the integration suites: a database, Redis key space, keys and log
 * folder of this run's own, exported through process.env (the jest workers inherit it). A run
 * never sees another run's data, and the canary scan finds only what these tests wrote.
 *
 * TEST_POSTGRES=pgbouncer (`npm run test:pooler`): the run also starts a PgBouncer of its own in
 * transaction mode in front of that server, and everything but the migration runner (the apps, the
 * CLI, the suites' own queries) reaches the database through it, with
 * DATABASE_PREPARED_STATEMENTS=false, as a deployment behind such a pooler runs.
 */
export default async function globalSetup(): Promise<void> {
  const root = repoRoot();
  if (!existsSync(migrateEntry(root))) {
    throw new Error(`${migrateEntry(root)} does not exist: run "npm run build" first ("npm test" does)`);
  }
  const runId = `${Date.now()}_${process.pid}`;
  const through = process.env.TEST_POSTGRES ?? 'direct';
  if (through !== 'direct' && through !== 'pgbouncer') throw new Error(`TEST_POSTGRES must be direct or pgbouncer (got "${through}")`);
  // TEST_REDIS=cluster: the run gets a three-master Redis Cluster of its own, on spare ports.
  const redisCluster =
    process.env.TEST_REDIS === 'cluster' ? await startPrivateRedisCluster({ dir: mkdtempSync(join(tmpdir(), 'gwrc-')) }) : undefined;
  if (redisCluster) {
    process.env.REDIS_URL = redisCluster.nodes[0].url;
    process.env.REDIS_CLUSTER_NODES = redisCluster.spec;
  } else if (process.env.REDIS_CLUSTER_NODES && !process.env.REDIS_URL) {
    // A cluster of the developer's (or CI's): its first node is the one probed before the run.
    process.env.REDIS_URL = `redis://${process.env.REDIS_CLUSTER_NODES.split(',')[0].trim()}`;
  }
  const infra = await resolveInfra().catch(async (e) => {
    await redisCluster?.destroy();
    throw e;
  });
  const databaseUrl = withDatabase(infra.databaseUrl, `gw_test_${runId}`);
  const logsRoot = join(root, 'test', '.logs');
  const scratch = join(tmpdir(), `gateway-test-${runId}`);
  const run: TestRun = {
    infra,
    databaseUrl,
    scratch,
    queuePrefix: `gwt${randomBytes(4).toString('hex')}`,
    redisCluster,
    laneDatabaseUrls: [databaseUrl],
  };
  (globalThis as Record<symbol, unknown>)[RUN_STATE] = run;

  if (through === 'pgbouncer') {
    try {
      const owner = decodeURIComponent(new URL(databaseUrl).username) || 'postgres';
      run.pooler = await startPgBouncer({ dir: join(scratch, 'pgbouncer'), upstream: databaseUrl, users: [owner, ...GATEWAY_ROLES] });
    } catch (e) {
      await infra.stop();
      await redisCluster?.destroy();
      throw e;
    }
  }
  // TEST_WORKERS=n (npm test: 2): n jest workers, each with a lane of its own (database, Redis key
  // prefix, data folder, admin), so suites running side by side never see each other's data.
  const laneCount = Number(process.env.TEST_WORKERS ?? 1);
  if (!Number.isInteger(laneCount) || laneCount < 1 || laneCount > 9)
    throw new Error(`TEST_WORKERS must be 1 to 9 (got "${process.env.TEST_WORKERS}")`);
  if (laneCount > 1 && run.pooler)
    throw new Error('TEST_WORKERS > 1 runs without the pooler: the pooled suites run in one lane (TEST_WORKERS=1)');
  const env: Record<string, string> = {
    NODE_ENV: 'test',
    DATABASE_URL: run.pooler ? onLoopbackPort(databaseUrl, run.pooler.port) : databaseUrl,
    ...(run.pooler ? { MIGRATION_DATABASE_URL: databaseUrl, DATABASE_PREPARED_STATEMENTS: 'false' } : {}),
    REDIS_URL: infra.redisUrl,
    QUEUE_PREFIX: run.queuePrefix,
    // Fresh keys per run: nothing may depend on a developer's .data folder.
    ...generateKeys(),
    DATA_DIR: join(scratch, 'data'),
    TEST_RUN_ID: runId,
    TEST_RUN_QUEUE_PREFIX: run.queuePrefix,
    TEST_LOG_DIR: join(logsRoot, runId),
    TEST_LEFTOVERS_DIR: join(scratch, 'leftovers'),
    // Every suite's apps are called from 127.0.0.1, one suite after another in a lane: the
    // per-address limit on failed authentication (20 a minute by default) would carry one suite's
    // wrong keys into the next one's answers. High enough never to be reached by accident;
    // auth-limits.e2e.test.ts gives its own apps the default.
    AUTH_FAILURE_LIMIT: '1000',
  };
  // Lane n of several: its own database and prefix (the run's prefix, then l<n>: the teardown's and
  // the canary's scan of the run's prefix covers every lane).
  const laneEnvs: Record<string, string>[] = Array.from({ length: laneCount }, (_, i) =>
    laneCount === 1
      ? { ...env }
      : {
          ...env,
          DATABASE_URL: withDatabase(databaseUrl, `gw_test_${runId}_l${i + 1}`),
          QUEUE_PREFIX: `${run.queuePrefix}l${i + 1}`,
          DATA_DIR: join(scratch, `data-l${i + 1}`),
        },
  );
  run.laneDatabaseUrls = laneCount === 1 ? [databaseUrl] : laneEnvs.map((l) => l.DATABASE_URL);
  for (const dir of [env.TEST_LOG_DIR, ...laneEnvs.map((l) => l.DATA_DIR)]) mkdirSync(dir, { recursive: true });
  // A developer's own operator token means nothing in this run's database.
  delete process.env.GATEWAY_OPERATOR_TOKEN;
  pruneOldRuns(logsRoot, 10);
  Object.assign(process.env, env);

  try {
    // The lanes migrate side by side (the roles they share are created safely from many databases).
    await Promise.all(
      laneEnvs.map(async (lane) => {
        await migrateDatabase(root, { ...process.env, ...lane });
        // Every CLI call of the suites runs as this admin (runCli passes process.env on).
        lane.GATEWAY_OPERATOR_TOKEN = (await bootstrapAdmin(root, { ...process.env, ...lane }, 'test-admin')).token;
      }),
    );
  } catch (e) {
    await run.pooler?.destroy();
    for (const url of run.laneDatabaseUrls) await dropDatabase(url).catch(() => undefined);
    await infra.stop();
    await redisCluster?.destroy();
    throw e;
  }
  // Lane 1 is also the main process's (a suite run in band); test/support/worker-env.js gives each
  // jest worker its lane by JEST_WORKER_ID.
  Object.assign(process.env, laneEnvs[0]);
  process.env.TEST_LANES = JSON.stringify(laneEnvs);
  process.env.TEST_LANE_DATABASES = JSON.stringify(run.laneDatabaseUrls);
  process.stdout.write(
    `\nintegration run ${runId}: postgres ${infra.source.postgres} (${laneCount === 1 ? redactUrl(databaseUrl) : `${laneCount} lanes, ${redactUrl(databaseUrl)}_l<n>`}` +
      `${run.pooler ? `, through pgbouncer on port ${run.pooler.port}, transaction mode` : ''}), ` +
      `redis ${redisCluster ? `cluster (${redisCluster.spec})` : `${infra.source.redis} (${redactUrl(infra.redisUrl)})`}, prefix ${run.queuePrefix}, ` +
      `logs ${env.TEST_LOG_DIR}\n`,
  );
}

/** Log folders are kept for looking into failures, but not forever. */
function pruneOldRuns(logsRoot: string, keep: number): void {
  const runs = readdirSync(logsRoot)
    .filter((d) => /^\d+_\d+$/.test(d))
    .sort();
  for (const old of runs.slice(0, Math.max(0, runs.length - keep))) rmSync(join(logsRoot, old), { recursive: true, force: true });
}
