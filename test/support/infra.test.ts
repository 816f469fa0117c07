import { existsSync } from 'node:fs';
import { Client } from 'pg';
import Redis from 'ioredis';
import { canConnect } from '../../scripts/lib/probes';
import { resolveInfra } from './infra';
import { PrivateServer, startPrivatePostgres, startPrivateRedis } from './stack';

jest.setTimeout(120_000);

async function query(url: string, sql: string): Promise<unknown[]> {
  const client = new Client({ connectionString: url, connectionTimeoutMillis: 3000 });
  await client.connect();
  try {
    return (await client.query(sql)).rows;
  } finally {
    await client.end();
  }
}

function redisClient(url: string): Redis {
  const redis = new Redis(url, { lazyConnect: true, maxRetriesPerRequest: 0, retryStrategy: () => null });
  redis.on('error', () => undefined);
  return redis;
}

describe('test infrastructure', () => {
  it('gives this run reachable servers, its own migrated database, keys and a Redis prefix', async () => {
    const infra = await resolveInfra();
    try {
      expect(infra.databaseUrl).toBe(process.env.DATABASE_URL);
      expect(new URL(infra.databaseUrl).pathname).toMatch(/^\/gw_test_\d+_\d+(_l\d)?$/);
      const tables = (await query(infra.databaseUrl, `SELECT table_name FROM information_schema.tables WHERE table_schema = 'public'`)) as {
        table_name: string;
      }[];
      expect(tables.length).toBeGreaterThan(0);

      const redis = redisClient(infra.redisUrl);
      await redis.connect();
      expect(await redis.ping()).toBe('PONG');
      redis.disconnect();
    } finally {
      await infra.stop();
    }
    expect(process.env.QUEUE_PREFIX).toMatch(/^gwt[0-9a-f]{8}(l\d)?$/);
    for (const [name, kid] of [
      ['TRANSIT_KEYS', 't1'],
      ['VAULT_KEKS', 'k1'],
      ['FINGERPRINT_KEYS', 'f1'],
      ['SECRETS_KEKS', 's1'],
    ]) {
      const [id, key] = process.env[name]!.split(':');
      expect(id).toBe(kid);
      expect(Buffer.from(key, 'base64')).toHaveLength(32);
    }
    // global-setup bootstrapped the run's first admin; runCli acts as it.
    expect(process.env.GATEWAY_OPERATOR_TOKEN).toMatch(/^op_[A-Za-z0-9_-]{43}$/);
    expect(existsSync(process.env.TEST_LOG_DIR!)).toBe(true);
  });

  describe('private Redis', () => {
    let server: PrivateServer | undefined;
    afterEach(async () => server?.destroy());

    it('starts on a spare port, stops, restarts on the same port without persistence, and cleans up', async () => {
      server = await startPrivateRedis();
      expect(server.port).not.toBe(6379);
      const redis = redisClient(server.url);
      await redis.connect();
      await redis.set('canary', '1');
      redis.disconnect();

      await server.stop();
      expect(await canConnect(server.port)).toBe(false);

      await server.start();
      const again = redisClient(server.url);
      await again.connect();
      expect(await again.ping()).toBe('PONG');
      // No persistence: a restart is a Redis that lost everything, which fault tests rely on.
      expect(await again.get('canary')).toBeNull();
      again.disconnect();

      const { dir, port } = server;
      await server.destroy();
      server = undefined;
      expect(await canConnect(port)).toBe(false);
      expect(existsSync(dir)).toBe(false);
    });
  });

  describe('private Postgres', () => {
    let server: PrivateServer | undefined;
    afterEach(async () => server?.destroy());

    it('starts its own cluster, keeps the data across a stop and a restart on the same port, and cleans up', async () => {
      server = await startPrivatePostgres();
      expect(server.port).not.toBe(5432);
      await query(server.url, 'CREATE TABLE kept (v int); INSERT INTO kept VALUES (42)');

      await server.stop();
      expect(await canConnect(server.port)).toBe(false);
      await expect(query(server.url, 'SELECT 1')).rejects.toThrow();

      await server.start();
      expect(await query(server.url, 'SELECT v FROM kept')).toEqual([{ v: 42 }]);

      // A crash (immediate shutdown) loses nothing committed either.
      await server.stop('immediate');
      await server.start();
      expect(await query(server.url, 'SELECT v FROM kept')).toEqual([{ v: 42 }]);

      const { dir, port } = server;
      await server.destroy();
      server = undefined;
      expect(await canConnect(port)).toBe(false);
      expect(existsSync(dir)).toBe(false);
    });
  });
});
