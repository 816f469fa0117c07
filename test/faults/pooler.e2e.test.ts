import { Client } from 'pg';
import { DataSource } from 'typeorm';
import { dataSourceOptions, GATEWAY_ROLES, preparedStatement, ROLE_TIMEOUTS } from '@app/persistence';
import { migrationUrl, onLoopbackPort, withDatabase, withUser } from '../../scripts/lib/database';
import { createMerchant, MerchantCredentials, PrivateServer, runCli, Stack, startPrivatePgBouncer, startStack } from '../support/stack';
import { expectReconciled, Json, MoneyDb, receiverOf, saleBody } from '../support/money';

jest.setTimeout(180_000);

/** What one pooled server connection holds: its backend pid and the named statements prepared on it. */
interface ServerState {
  pid: number;
  statements: string[];
}

/**
 * Every server connection PgBouncer holds for `user` on the database, as its admin console lists
 * them (SHOW SERVERS), with the named statements prepared on each. pg_prepared_statements shows
 * only the session's own, so as many clients as there are such connections each hold a
 * transaction open at once: each then sits on its own server connection, the idle ones first.
 * The backend pids they report must cover every listed one, or the probe missed some.
 */
async function serverStates(pooled: string, user: string): Promise<{ listed: number[]; seen: ServerState[] }> {
  const database = decodeURIComponent(new URL(pooled).pathname.slice(1));
  const admin = new Client({ connectionString: withDatabase(pooled, 'pgbouncer') });
  await admin.connect();
  let listed: number[];
  try {
    const { rows } = await admin.query<{ user: string; database: string; remote_pid: number }>('SHOW SERVERS');
    listed = rows.filter((r) => r.user === user && r.database === database).map((r) => Number(r.remote_pid));
  } finally {
    await admin.end();
  }
  const clients = listed.map(() => new Client({ connectionString: withUser(pooled, user) }));
  try {
    await Promise.all(clients.map((c) => c.connect()));
    const seen = await Promise.all(
      clients.map(async (c) => {
        await c.query('BEGIN');
        const { rows } = await c.query<{ pid: number; statements: string[] }>(
          'SELECT pg_backend_pid() AS pid, array(SELECT name FROM pg_prepared_statements ORDER BY name) AS statements',
        );
        return rows[0];
      }),
    );
    await Promise.all(clients.map((c) => c.query('COMMIT')));
    return { listed, seen };
  } finally {
    await Promise.all(clients.map((c) => c.end().catch(() => undefined)));
  }
}

/**
 * The apps, the CLI and the outbox relay behind PgBouncer 1.18 in transaction mode (which keeps no
 * prepared statements across transactions), with DATABASE_PREPARED_STATEMENTS=false: each role's
 * bounds still hold, the money path works, and no named statement is left on any server
 * connection the pooler hands from one client to the next.
 */
describe('behind PgBouncer in transaction mode', () => {
  let pooler: PrivateServer;
  let pooled: string;
  let stack: Stack;
  let shop: MerchantCredentials;
  let through: Record<string, string>;

  beforeAll(async () => {
    // The run's database straight on the server (in a pooled run, DATABASE_URL is its pooler's).
    const direct = migrationUrl(process.env);
    pooler = await startPrivatePgBouncer(direct, GATEWAY_ROLES);
    pooled = onLoopbackPort(direct, pooler.port);
    through = { DATABASE_URL: pooled, DATABASE_PREPARED_STATEMENTS: 'false' };
    stack = await startStack(through);
    shop = await createMerchant('pooler shop', through);
  });

  afterAll(async () => {
    await stack?.stop();
    await pooler?.destroy();
  });

  it("every role's bounds (ALTER ROLE … IN DATABASE … SET) hold on its pooled connections", async () => {
    for (const role of GATEWAY_ROLES) {
      const c = new Client({ connectionString: withUser(pooled, role) });
      await c.connect();
      try {
        const { rows } = await c.query<{ statement_timeout: string; lock_timeout: string; idle_in_transaction_session_timeout: string }>(
          `SELECT current_setting('statement_timeout') AS statement_timeout, current_setting('lock_timeout') AS lock_timeout,
                  current_setting('idle_in_transaction_session_timeout') AS idle_in_transaction_session_timeout`,
        );
        expect({ role, ...rows[0] }).toEqual({ role, ...ROLE_TIMEOUTS[role] });
      } finally {
        await c.end();
      }
    }
  });

  it('sales, captures, cancels, a chargeback and the books work through it, and no server connection keeps a named statement', async () => {
    const receiver = receiverOf(stack.baseUrl, shop);
    const sales = await Promise.all(Array.from({ length: 24 }, () => receiver('sale', saleBody(10_000))));
    expect(sales.map((r) => r.json?.status)).toEqual(Array(24).fill('8'));

    const auth = await receiver('authorize', saleBody(10_000));
    expect(auth.json).toMatchObject({ status: '3' });
    const id = auth.json.transactionId as string;
    expect((await receiver('capture', { transactionId: id, amount: 6_000 })).json).toMatchObject({ status: '8' });
    expect((await receiver('cancel', { transactionId: id, amount: 1_000 })).json).toMatchObject({
      status: '12',
      processor: { capturedAmount: '6000', cancelledAmount: '1000' },
    });
    const charged = sales[0].json.transactionId as string;
    const chargeback = await runCli<Json>(['chargeback:record', '--transaction', charged, '--amount', '2500'], through);
    expect(chargeback).toMatchObject({ amount: 2500 });

    // The relay published every event (settlement caught up), and the operator's books agree.
    const db = await MoneyDb.connect(pooled);
    try {
      for (const t of [id, charged]) await db.settled(t);
      expect(await db.recorded(id)).toMatchObject({ status: 12, captured: 6_000, cancelled: 1_000, held: false });
      const [{ n }] = await db.query<{ n: number }>('SELECT count(*)::int AS n FROM outbox WHERE published_at IS NULL');
      expect(n).toBe(0);
    } finally {
      await db.close();
    }
    expect(await expectReconciled(shop.merchantId, through)).toBeGreaterThanOrEqual(25);

    // The apps gone, their server connections stay in the pool, idle: look at every one.
    await stack.stop();
    const states = await Promise.all(GATEWAY_ROLES.map(async (role) => ({ role, ...(await serverStates(pooled, role)) })));
    for (const s of states) expect(s.seen.map((x) => x.pid).sort()).toEqual([...s.listed].sort());
    // The hot path's statements ran on these: the api, tokenizer and settlement pools are not empty.
    const roles = Object.fromEntries(states.map((s) => [s.role, s]));
    for (const role of ['gateway_api', 'gateway_tokenizer', 'gateway_settlement'] as const)
      expect(roles[role].listed.length).toBeGreaterThan(0);
    expect(states.flatMap((s) => s.seen.flatMap((x) => x.statements.map((name) => `${s.role}: ${name}`)))).toEqual([]);
  });

  it('the probe finds a named statement left on a pooled connection (with the setting on)', async () => {
    const owner = decodeURIComponent(new URL(pooled).username) || 'postgres';
    const name = `pooler_probe_${process.pid}`;
    const probe = preparedStatement<{ one: number }>(name, 'SELECT 1 AS one');
    const named = (on: boolean) => (s: ServerState[]) => s.some((x) => x.statements.includes(name)) === on;
    for (const preparedStatements of [false, true]) {
      const db = await new DataSource(dataSourceOptions({ databaseUrl: pooled, preparedStatements }, 1)).initialize();
      try {
        expect(await probe(db, [])).toEqual([{ one: 1 }]);
      } finally {
        await db.destroy();
      }
      const { listed, seen } = await serverStates(pooled, owner);
      expect(seen.map((x) => x.pid).sort()).toEqual([...listed].sort());
      expect(named(preparedStatements)(seen)).toBe(true);
    }
  });
});
