import { randomBytes } from 'node:crypto';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { dropDatabase, onLoopbackPort, redactUrl, withDatabase } from '../../scripts/lib/database';
import { generateKeys } from '../../scripts/lib/dev-keys';
import { migrateDatabase } from '../../scripts/lib/launcher';
import { startPgBouncer, startPrivateRedisCluster } from '../../scripts/lib/local-servers';
import { GATEWAY_ROLES } from '../../libs/persistence/src/roles';
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
  const run: TestRun = { infra, databaseUrl, scratch, queuePrefix: `gwt${randomBytes(4).toString('hex')}`, redisCluster };
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
    TEST_LOG_DIR: join(logsRoot, runId),
    TEST_LEFTOVERS_DIR: join(scratch, 'leftovers'),
  };
  for (const dir of [env.DATA_DIR, env.TEST_LOG_DIR]) mkdirSync(dir, { recursive: true });
  // A developer's own operator token means nothing in this run's database.
  delete process.env.GATEWAY_OPERATOR_TOKEN;
  pruneOldRuns(logsRoot, 10);
  Object.assign(process.env, env);

  try {
    await migrateDatabase(root, process.env);
    // Every CLI call of the suites runs as this admin (runCli passes process.env on).
    process.env.GATEWAY_OPERATOR_TOKEN = (await bootstrapAdmin(root, process.env, 'test-admin')).token;
  } catch (e) {
    await run.pooler?.destroy();
    await dropDatabase(databaseUrl).catch(() => undefined);
    await infra.stop();
    await redisCluster?.destroy();
    throw e;
  }
  process.stdout.write(
    `\nintegration run ${runId}: postgres ${infra.source.postgres} (${redactUrl(databaseUrl)}` +
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
