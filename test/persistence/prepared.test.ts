import { DataSource } from 'typeorm';
import { dataSourceOptions, preparedStatement } from '@app/persistence';

jest.setTimeout(60_000);

/** Named statements of the hot path (real Postgres): on the pool, or on a transaction's own connection. */
describe('preparedStatement (real Postgres)', () => {
  let db: DataSource;
  const table = `prepared_probe_${process.pid}`;
  const insert = preparedStatement<{ n: number }>(
    `prepared_probe_insert_${process.pid}`,
    `INSERT INTO ${table} (n) SELECT * FROM unnest($1::int[]) RETURNING n`,
  );
  const count = preparedStatement<{ c: number }>(`prepared_probe_count_${process.pid}`, `SELECT count(*)::int AS c FROM ${table}`);

  beforeAll(async () => {
    db = await new DataSource(dataSourceOptions(process.env.DATABASE_URL as string, 2)).initialize();
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
});
