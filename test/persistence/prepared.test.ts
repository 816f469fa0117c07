import { DataSource } from 'typeorm';
import { dataSourceOptions, preparedStatement } from '@app/persistence';
import { migrationUrl } from '../../scripts/lib/database';

jest.setTimeout(60_000);

/**
 * Named statements of the hot path (real Postgres, straight, not through a run's pooler): on the
 * pool, or on a transaction's own connection; unnamed with the setting off.
 */
const databaseUrl = migrationUrl(process.env);

describe('preparedStatement (real Postgres)', () => {
  let db: DataSource;
  const table = `prepared_probe_${process.pid}`;
  const insert = preparedStatement<{ n: number }>(
    `prepared_probe_insert_${process.pid}`,
    `INSERT INTO ${table} (n) SELECT * FROM unnest($1::int[]) RETURNING n`,
  );
  const count = preparedStatement<{ c: number }>(`prepared_probe_count_${process.pid}`, `SELECT count(*)::int AS c FROM ${table}`);

  beforeAll(async () => {
    db = await new DataSource(dataSourceOptions(databaseUrl, 2)).initialize();
    await db.query(`CREATE TABLE ${table} (n int PRIMARY KEY)`);
  });

  afterAll(async () => {
    await db?.query(`DROP TABLE IF EXISTS ${table}`);
    await db?.destroy();
  });

  it('returns the rows, again and again on every pooled connection (prepared once each)', async () => {
    const rounds = await Promise.all(Array.from({ length: 6 }, (_, i) => insert(db, [[i * 2 + 1000, i * 2 + 1001]])));
    expect(
      rounds
        .flat()
        .map((r) => r.n)
        .sort(),
    ).toEqual(Array.from({ length: 12 }, (_, i) => 1000 + i));
    expect(await count(db, [])).toEqual([{ c: 12 }]);
  });

  it("runs on the transaction's connection: sees its own writes, and a rollback undoes them", async () => {
    await expect(
      db.transaction(async (tx) => {
        await insert(tx, [[1, 2, 3]]);
        expect((await count(tx, []))[0].c).toBe(15);
        expect((await count(db, []))[0].c).toBe(12); // another connection does not see it yet
        throw new Error('roll back');
      }),
    ).rejects.toThrow('roll back');
    expect((await count(db, []))[0].c).toBe(12);
  });

  it('fails with the SQLSTATE in code, as through TypeORM', async () => {
    await expect(insert(db, [[1000]])).rejects.toMatchObject({ code: '23505' });
  });

  // One connection, so the statement and the look at what it left share a session.
  it.each([
    [true, [`prepared_probe_count_${process.pid}`]],
    [false, []],
  ])('preparedStatements %s: the same rows, and what the connection keeps prepared is %j', async (preparedStatements, kept) => {
    const own = await new DataSource(dataSourceOptions({ databaseUrl, preparedStatements }, 1)).initialize();
    try {
      expect(await count(own, [])).toEqual([{ c: 12 }]);
      expect(await own.transaction((tx) => count(tx, []))).toEqual([{ c: 12 }]);
      const left = await own.query<{ name: string }[]>('SELECT name FROM pg_prepared_statements ORDER BY name');
      expect(left.map((r) => r.name)).toEqual(kept);
    } finally {
      await own.destroy();
    }
  });
});
