import { rmSync } from 'node:fs';
import { join } from 'node:path';
// Relative paths: jest loads the global teardown without the suites' module mapping.
import { connectRedis, deleteKeys } from '../../libs/platform/src/redis';
import { testRedisTarget } from './redis';
import { dropDatabase, redactUrl } from '../../scripts/lib/database';
import { cleanLeftovers } from './leftovers';
import { RUN_STATE, TestRun } from './run-state';

/**
 * Undoes the global setup: apps and private servers a failed suite left running, the run's
 * database (kept when KEEP_TEST_DB is set, to look into a failure), its Redis keys, containers.
 */
export default async function globalTeardown(): Promise<void> {
  const run = (globalThis as Record<symbol, unknown>)[RUN_STATE] as TestRun | undefined;
  if (!run) return; // the setup failed before there was anything to undo
  const notes: string[] = [];

  for (const line of await cleanLeftovers(join(run.scratch, 'leftovers'))) notes.push(line);
  await run.pooler?.destroy().catch((e) => notes.push(`could not stop the run's pgbouncer: ${(e as Error).message}`));

  if (process.env.KEEP_TEST_DB) {
    notes.push(`kept the test databases ${(run.laneDatabaseUrls ?? [run.databaseUrl]).map(redactUrl).join(', ')} (KEEP_TEST_DB)`);
    if (run.infra.source.postgres === 'container') notes.push('(it lives in a container that stops now: set DATABASE_URL to keep it)');
  } else {
    for (const url of run.laneDatabaseUrls ?? [run.databaseUrl])
      await dropDatabase(url).catch((e) => notes.push(`could not drop the test database ${redactUrl(url)}: ${(e as Error).message}`));
  }

  if (run.redisCluster) {
    // The run's own cluster: its keys go with it.
    await run.redisCluster.destroy();
  } else {
    // Every master of a cluster (REDIS_CLUSTER_NODES), or the one server.
    await deleteRunKeys(run.queuePrefix).catch((e) => notes.push(`could not delete the run's Redis keys: ${(e as Error).message}`));
  }
  await run.infra.stop();
  rmSync(run.scratch, { recursive: true, force: true });
  if (notes.length) process.stdout.write(`\nintegration teardown:\n  ${notes.join('\n  ')}\n`);
}

async function deleteRunKeys(prefix: string): Promise<void> {
  const redis = connectRedis(testRedisTarget(), { maxRetriesPerRequest: 1, lazyConnect: true });
  redis.on('error', () => undefined);
  await redis.connect();
  try {
    await deleteKeys(redis, `${prefix}*`);
  } finally {
    redis.disconnect();
  }
}
