import type { StartedTestContainer } from 'testcontainers';
import { probePostgres, probeRedis, redactUrl } from '../../scripts/lib/database';

/**
 * Where the integration suites find Postgres and Redis, in order of preference:
 * 1. DATABASE_URL / REDIS_URL when set (CI, or a developer's own servers);
 * 2. throwaway containers when a Docker engine answers (nothing to install but Docker);
 * 3. the local servers on their standard ports.
 * TEST_INFRA=local or TEST_INFRA=containers skips the guessing.
 */
export interface Infra {
  /** A server URL; the global setup puts a fresh database of its own on this server. */
  databaseUrl: string;
  redisUrl: string;
  source: { postgres: InfraSource; redis: InfraSource };
  /** Stops the containers this call started (nothing for the other sources). */
  stop(): Promise<void>;
}

export type InfraSource = 'env' | 'container' | 'local';

export const LOCAL_DATABASE_URL = 'postgres://postgres@127.0.0.1:5432/postgres';
export const LOCAL_REDIS_URL = 'redis://127.0.0.1:6379';

export async function resolveInfra(): Promise<Infra> {
  const fromEnv = { postgres: process.env.DATABASE_URL, redis: process.env.REDIS_URL };
  const containers: StartedTestContainer[] = [];
  const infra: Infra = {
    databaseUrl: fromEnv.postgres ?? LOCAL_DATABASE_URL,
    redisUrl: fromEnv.redis ?? LOCAL_REDIS_URL,
    source: { postgres: fromEnv.postgres ? 'env' : 'local', redis: fromEnv.redis ? 'env' : 'local' },
    stop: async () => {
      await Promise.all(containers.map((c) => c.stop({ timeout: 5_000 }).catch(() => undefined)));
    },
  };
  const mode = process.env.TEST_INFRA;
  const needContainers = (!fromEnv.postgres || !fromEnv.redis) && mode !== 'local';
  if (needContainers && (mode === 'containers' || (await containerRuntimeAvailable()))) {
    try {
      if (!fromEnv.postgres) {
        const pg = await startPostgresContainer();
        containers.push(pg);
        infra.databaseUrl = `postgres://postgres@${pg.getHost()}:${pg.getMappedPort(5432)}/postgres`;
        infra.source.postgres = 'container';
      }
      if (!fromEnv.redis) {
        const redis = await startRedisContainer();
        containers.push(redis);
        infra.redisUrl = `redis://${redis.getHost()}:${redis.getMappedPort(6379)}`;
        infra.source.redis = 'container';
      }
    } catch (e) {
      await infra.stop();
      throw e;
    }
  }
  await assertReachable(infra);
  return infra;
}

/**
 * Testcontainers' own runtime discovery (socket, DOCKER_HOST, config files), bounded in time:
 * on a machine with only the docker client it fails in well under a second, but a hung socket
 * must not stall the test run.
 */
export async function containerRuntimeAvailable(timeoutMs = 10_000): Promise<boolean> {
  try {
    const { getContainerRuntimeClient } = await import('testcontainers');
    let timer: NodeJS.Timeout | undefined;
    const timeout = new Promise<never>((_, reject) => {
      timer = setTimeout(() => reject(new Error('timeout')), timeoutMs);
    });
    try {
      await Promise.race([getContainerRuntimeClient(), timeout]);
      return true;
    } finally {
      clearTimeout(timer);
    }
  } catch {
    return false;
  }
}

async function startPostgresContainer(): Promise<StartedTestContainer> {
  const { GenericContainer, Wait } = await import('testcontainers');
  return (
    new GenericContainer('postgres:16-alpine')
      .withEnvironment({ POSTGRES_HOST_AUTH_METHOD: 'trust' })
      .withExposedPorts(5432)
      // Test data needs no durability: tmpfs and no fsync make migrations and inserts much faster.
      .withTmpFs({ '/var/lib/postgresql/data': 'rw' })
      .withCommand([
        'postgres',
        '-c',
        'fsync=off',
        '-c',
        'synchronous_commit=off',
        '-c',
        'full_page_writes=off',
        '-c',
        'max_connections=300',
      ])
      // The entrypoint restarts the server once after init; the second "ready" line is the real one.
      .withWaitStrategy(Wait.forLogMessage(/database system is ready to accept connections/, 2))
      .withStartupTimeout(120_000)
      .start()
  );
}

async function startRedisContainer(): Promise<StartedTestContainer> {
  const { GenericContainer, Wait } = await import('testcontainers');
  return new GenericContainer('redis:7-alpine')
    .withCommand(['redis-server', '--save', '', '--appendonly', 'no'])
    .withExposedPorts(6379)
    .withWaitStrategy(Wait.forLogMessage(/Ready to accept connections/))
    .withStartupTimeout(60_000)
    .start();
}

async function assertReachable(infra: Infra): Promise<void> {
  const [pg, redis] = await Promise.all([probePostgres(infra.databaseUrl), probeRedis(infra.redisUrl)]);
  const problems = [
    !pg.ok && `Postgres (${infra.source.postgres}) at ${redactUrl(infra.databaseUrl)}: ${pg.error}`,
    !redis.ok && `Redis (${infra.source.redis}) at ${redactUrl(infra.redisUrl)}: ${redis.error}`,
  ].filter(Boolean);
  if (problems.length) {
    await infra.stop();
    throw new Error(
      `integration tests need Postgres and Redis; not reachable:\n  ${problems.join('\n  ')}\nSet DATABASE_URL/REDIS_URL, start Docker, or start the local servers.`,
    );
  }
}
