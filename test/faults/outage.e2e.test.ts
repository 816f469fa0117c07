import { bootstrapAdmin } from '../../scripts/lib/operators';
import { runNode, migrateEntry, repoRoot } from '../../scripts/lib/processes';
import {
  AppHandle,
  createMerchant,
  eventually,
  post,
  PrivateServer,
  Stack,
  startPrivatePostgres,
  startPrivateRedis,
  startStack,
} from '../support/stack';
import { CANARY_CARDS } from '../fixtures/cards';
import { sampleValue } from '../support/metrics';

jest.setTimeout(180_000);

/**
 * A dependency that goes away answers 503 (fast, with the wire error body), and the gateway
 * recovers by itself when it returns: no restart of any app. Each outage uses a private
 * Postgres or Redis on a spare port, so the shared servers (and other suites) are untouched.
 */
describe('dependency outages', () => {
  let redis: PrivateServer;
  let pg: PrivateServer;
  let stack: Stack;
  let merchant: { merchantId: string; merchantKey: string };
  let env: Record<string, string>;
  const add = () =>
    post(stack.baseUrl, '/v1/token/add', {
      'transaction-request': {
        version: '1.0.0',
        verification: merchant,
        tokencard: { cardNumber: CANARY_CARDS.visa, cardHolder: 'OUTAGE', cardExpirationDate: '203012' },
      },
    });

  /** dependency_up on an app's /metrics, which must answer within 3 s whatever is down. */
  const dependencyUp = async (app: AppHandle): Promise<Record<'postgres' | 'redis', number | undefined>> => {
    const started = Date.now();
    const text = await (await fetch(`${app.url}/metrics`)).text();
    expect(Date.now() - started).toBeLessThan(3000);
    return {
      postgres: sampleValue(text, 'dependency_up', { dependency: 'postgres' }),
      redis: sampleValue(text, 'dependency_up', { dependency: 'redis' }),
    };
  };

  beforeAll(async () => {
    [redis, pg] = await Promise.all([startPrivateRedis(), startPrivatePostgres()]);
    env = { DATABASE_URL: pg.url, REDIS_URL: redis.url, REDIS_CLUSTER_NODES: '', MERCHANT_CACHE_MS: '0', REPLY_TIMEOUT_MS: '3000' };
    const root = repoRoot();
    const migrated = await runNode(migrateEntry(root), [], { cwd: root, env: { ...process.env, ...env }, timeoutMs: 60_000 });
    expect(migrated.code).toBe(0);
    // The private database has operators of its own: the first admin, for the CLI calls below.
    env.GATEWAY_OPERATOR_TOKEN = (await bootstrapAdmin(root, { ...process.env, ...env }, 'outage-admin')).token;
    merchant = await createMerchant('outage shop', env);
    stack = await startStack(env);
    expect((await add()).status).toBe(200);
  });

  afterAll(async () => {
    await stack?.stop();
    await Promise.all([redis?.destroy(), pg?.destroy()]);
  });

  it('answers 503 while Redis is down and serves again once it is back', async () => {
    await redis.stop();
    const started = Date.now();
    const down = await add();
    expect(down.status).toBe(503);
    expect(down.json.result.error).toMatchObject({ code: '503' });
    expect(Date.now() - started).toBeLessThan(3000);
    expect((await fetch(`${stack.baseUrl}/health`)).status).toBe(503);
    // Prometheus's `up` stays 1: /metrics answers, and says which dependency is down.
    expect(await dependencyUp(stack.api)).toEqual({ postgres: 1, redis: 0 });

    await redis.start();
    // The client, its reply subscription and the tokenizer's workers all reconnect by themselves.
    await eventually(async () => expect((await add()).status).toBe(200), { timeoutMs: 60_000, intervalMs: 500 });
    expect((await fetch(`${stack.baseUrl}/health`)).status).toBe(200);
    expect(await dependencyUp(stack.api)).toEqual({ postgres: 1, redis: 1 });
  });

  it('answers 503 while Postgres is down and serves again once it is back', async () => {
    await pg.stop('immediate');
    const down = await add();
    expect(down.status).toBe(503);
    expect(down.json.result.error.code).toBe('503');
    expect(JSON.stringify(down.json)).not.toContain(CANARY_CARDS.visa);
    expect((await fetch(`${stack.baseUrl}/health`)).status).toBe(503);
    // The tokenizer's scrape also reads the outbox lag from Postgres: it gives up in time, and says why.
    expect(await dependencyUp(stack.tokenizer)).toEqual({ postgres: 0, redis: 1 });

    await pg.start();
    await eventually(async () => expect((await add()).status).toBe(200), { timeoutMs: 60_000, intervalMs: 500 });
    expect(stack.api.isRunning() && stack.tokenizer.isRunning()).toBe(true);
    await eventually(async () => expect(await dependencyUp(stack.tokenizer)).toEqual({ postgres: 1, redis: 1 }));
  });
});
