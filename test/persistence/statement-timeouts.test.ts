import { Client } from 'pg';
import { DataSource } from 'typeorm';
import { dataSourceOptions, statementBatcher } from '@app/persistence';
import { unavailabilityOf } from '@app/platform';

jest.setTimeout(60_000);

/**
 * What a statement Postgres cancels does to a pool and a batcher (real Postgres): each caller of
 * the batch gets the error, classified as "unavailable, retry" by its SQLSTATE; the batcher goes
 * on with the next batch; the pool neither leaks a client nor hands out one left in a broken
 * transaction or on a closed connection. The bounds come from PGOPTIONS, which node-pg reads when
 * it opens a connection (a role's ALTER ROLE … SET would set them the same way).
 */
describe('statement and lock timeouts against a pool and a batcher (real Postgres)', () => {
  const table = `timeout_probe_${process.pid}`;
  let admin: Client;

  async function pool(options: string): Promise<DataSource> {
    const saved = process.env.PGOPTIONS;
    process.env.PGOPTIONS = options;
    try {
      const db = await new DataSource(dataSourceOptions(process.env.DATABASE_URL as string, 3)).initialize();
      // Every client of the pool opens now, with the options.
      await Promise.all([1, 2, 3].map(() => db.query('SELECT pg_sleep(0.05)')));
      return db;
    } finally {
      if (saved === undefined) delete process.env.PGOPTIONS;
      else process.env.PGOPTIONS = saved;
    }
  }

  /** Runs `during` while another session holds an exclusive lock on the probe table. */
  async function locked<T>(during: () => Promise<T>): Promise<T> {
    const locker = new Client({ connectionString: process.env.DATABASE_URL });
    await locker.connect();
    try {
      await locker.query('BEGIN');
      await locker.query(`LOCK TABLE ${table} IN ACCESS EXCLUSIVE MODE`);
      return await during();
    } finally {
      await locker.query('ROLLBACK').catch(() => undefined);
      await locker.end();
    }
  }

  const poolStats = (db: DataSource) => {
    const p = (db.driver as unknown as { master: { totalCount: number; idleCount: number; waitingCount: number } }).master;
    return { total: p.totalCount, idle: p.idleCount, waiting: p.waitingCount };
  };

  beforeAll(async () => {
    admin = new Client({ connectionString: process.env.DATABASE_URL });
    await admin.connect();
    await admin.query(`CREATE TABLE ${table} (id int PRIMARY KEY, n int NOT NULL DEFAULT 0)`);
    await admin.query(`INSERT INTO ${table} (id) SELECT generate_series(1, 10)`);
  });

  afterAll(async () => {
    await admin.query(`DROP TABLE IF EXISTS ${table}`);
    await admin.end();
  });

  it('lock_timeout: every caller of the stuck batch gets 55P03 promptly, the next batch runs, no client leaks', async () => {
    const db = await pool('-c lock_timeout=200ms -c statement_timeout=5000ms');
    try {
      const bump = statementBatcher<number, number>(async (ids) => {
        const rows: { id: number; n: number }[] = await db.query(
          `WITH u AS (UPDATE ${table} SET n = n + 1 WHERE id = ANY($1::int[]) RETURNING id, n) SELECT * FROM u`,
          [ids],
        );
        return ids.map((id) => rows.find((r) => r.id === id)?.n ?? new Error('missing'));
      });
      const started = Date.now();
      const outcomes = await locked(() =>
        Promise.all(
          [1, 2, 3, 4, 5, 6].map((id) =>
            bump(id).then(
              () => 'ok',
              (e: unknown) => unavailabilityOf(e) ?? String(e),
            ),
          ),
        ),
      );
      expect(outcomes).toEqual(Array(6).fill('lock_timeout'));
      expect(Date.now() - started).toBeLessThan(3_000);
      // Nothing of the failed batches committed.
      expect((await admin.query(`SELECT sum(n)::int AS s FROM ${table}`)).rows[0].s).toBe(0);
      // The batcher goes on, and the pool has every client back, none in a transaction.
      expect(await Promise.all([1, 2, 3].map(bump))).toEqual([1, 1, 1]);
      expect(poolStats(db)).toEqual({ total: 3, idle: 3, waiting: 0 });
      expect((await db.query('SELECT txid_current_if_assigned() AS t'))[0].t).toBeNull();
    } finally {
      await db.destroy();
      await admin.query(`UPDATE ${table} SET n = 0`);
    }
  });

  it('statement_timeout (no lock timeout): a transaction cancelled mid-way rolls back whole, 57014, and its client is reusable', async () => {
    const db = await pool('-c statement_timeout=300ms');
    try {
      const failed = await locked(() =>
        db
          .transaction(async (tx) => {
            await tx.query(`SELECT 1`);
            await tx.query(`UPDATE ${table} SET n = n + 1 WHERE id = 1`);
          })
          .then(
            () => undefined,
            (e: unknown) => e,
          ),
      );
      expect(unavailabilityOf(failed)).toBe('statement_timeout');
      expect((failed as { code?: string }).code).toBe('57014');
      expect((await admin.query(`SELECT n FROM ${table} WHERE id = 1`)).rows[0].n).toBe(0);
      await db.transaction((tx) => tx.query(`UPDATE ${table} SET n = n + 1 WHERE id = 1`));
      expect((await admin.query(`SELECT n FROM ${table} WHERE id = 1`)).rows[0].n).toBe(1);
      expect(poolStats(db)).toMatchObject({ idle: poolStats(db).total, waiting: 0 });
    } finally {
      await db.destroy();
      await admin.query(`UPDATE ${table} SET n = 0`);
    }
  });

  it('idle_in_transaction_session_timeout: the closed connection is an "unavailable" failure and leaves the pool', async () => {
    const db = await pool('-c idle_in_transaction_session_timeout=200ms');
    try {
      const failed = await db
        .transaction(async (tx) => {
          await tx.query(`UPDATE ${table} SET n = n + 1 WHERE id = 2`);
          // Work outside the database while the transaction is open, longer than the bound.
          await new Promise((r) => setTimeout(r, 700));
          await tx.query('SELECT 1');
        })
        .then(
          () => undefined,
          (e: unknown) => e,
        );
      expect(failed).toBeDefined();
      expect(unavailabilityOf(failed)).toMatch(/^(idle_in_transaction_timeout|connection)$/);
      expect((await admin.query(`SELECT n FROM ${table} WHERE id = 2`)).rows[0].n).toBe(0);
      // The broken client is gone; the pool opens another and serves every caller.
      expect(await Promise.all([1, 2, 3, 4].map(() => db.query('SELECT 1 AS one')))).toEqual(Array(4).fill([{ one: 1 }]));
      expect(poolStats(db).total).toBeLessThanOrEqual(3);
      expect(poolStats(db).waiting).toBe(0);
    } finally {
      await db.destroy();
    }
  });
});
