import { Writable } from 'node:stream';
import pino from 'pino';
import { DataSource } from 'typeorm';
import { dataSourceOptions } from '@app/persistence';
import { SAFE_LOG_OPTIONS } from '@app/platform/logging';

jest.setTimeout(60_000);

/**
 * Issue 14 item 5, at the source: a failing statement's error, as TypeORM throws it from real
 * Postgres, carries the statement's parameters and Postgres's `detail` (the whole failing row).
 * Logged with pino's own serializer it leaks them; logged with the apps' options it does not.
 */
describe('a failing statement logged (real Postgres)', () => {
  let db: DataSource;
  const table = `leak_probe_${process.pid}`;
  const PAN = '4929000000000455'; // Luhn-valid: card-shaped
  const HOLDER = 'PLANTED HOLDER ZQXV';
  const STREET = 'Rua Plantada 1234 ZQXV';
  const SECRET = 'c2VjcmV0LWRhdGEta2V5LVpRWFY=';

  beforeAll(async () => {
    db = await new DataSource(dataSourceOptions(process.env.DATABASE_URL as string, 2)).initialize();
    await db.query(`CREATE TABLE ${table} (id uuid PRIMARY KEY, holder text NOT NULL, billing jsonb, key bytea,
      CONSTRAINT ${table}_holder CHECK (holder NOT LIKE 'PLANTED%'))`);
  });

  afterAll(async () => {
    await db?.query(`DROP TABLE IF EXISTS ${table}`);
    await db?.destroy();
  });

  function logged(options: pino.LoggerOptions, log: (l: pino.Logger) => void): string {
    let out = '';
    const sink = new Writable({ write: (chunk, _enc, cb) => ((out += chunk.toString()), cb()) });
    log(pino(options, sink));
    return out;
  }

  async function failure(sql: string, params: unknown[]): Promise<Error> {
    try {
      await db.query(sql, params);
    } catch (e) {
      return e as Error;
    }
    throw new Error('the statement was expected to fail');
  }

  const planted = [PAN, HOLDER, STREET, SECRET, 'ZQXV'];
  const insert = `INSERT INTO ${table} (id, holder, billing, key) VALUES ($1, $2, $3, decode($4, 'base64'))`;

  it('a check violation: pino alone leaks the parameters and the failing row; the safe options keep code, constraint and table', async () => {
    const e = await failure(insert, ['6a1f2d0e-8a55-4d8e-9d0b-2f0c7a1f3b11', HOLDER, { address: STREET, doc: PAN }, SECRET]);
    const raw = logged({}, (l) => l.error(e));
    // The reproduction: this is what the tokenizer's logs held (issue 14).
    expect(raw).toContain(PAN);
    expect(raw).toContain(HOLDER);
    const safe = logged(SAFE_LOG_OPTIONS, (l) => l.error(e));
    for (const p of planted) expect(safe).not.toContain(p);
    const line = JSON.parse(safe) as { msg: string; err: Record<string, unknown> };
    expect(line.err).toMatchObject({ type: 'QueryFailedError', code: '23514', constraint: `${table}_holder`, table });
    expect(line.msg).toContain('violates check constraint');
    expect(Object.keys(line.err).sort()).toEqual(expect.not.arrayContaining(['parameters', 'query', 'driverError', 'detail', 'where']));
  });

  it('a value quoted in the message itself (invalid uuid) is withheld; the same through a cause chain and an AggregateError', async () => {
    const e = await failure(insert, [`${PAN}-${HOLDER}`, 'x', null, SECRET]);
    expect(e.message).toContain(PAN);
    const wrapped = new AggregateError([new Error('outer', { cause: e })], `batch failed for ${PAN}`);
    for (const log of [
      (l: pino.Logger) => l.error(e),
      (l: pino.Logger) => l.warn({ err: wrapped }),
      (l: pino.Logger) => l.error({ error: e }, `insert failed: ${PAN}`),
    ]) {
      const safe = logged(SAFE_LOG_OPTIONS, log);
      for (const p of planted) expect(safe).not.toContain(p);
      expect(safe).toContain('22P02');
    }
    expect(logged(SAFE_LOG_OPTIONS, (l) => l.error(e))).toContain('invalid input syntax for type uuid: [value withheld]');
  });

  it('a unique violation: the key in detail never shows', async () => {
    const id = '7b2e3c1f-9b66-4e9f-8e1c-3a1d8b2c4c22';
    await db.query(`INSERT INTO ${table} (id, holder) VALUES ($1, $2)`, [id, 'someone']);
    const e = await failure(`INSERT INTO ${table} (id, holder, billing) VALUES ($1, $2, $3)`, [id, 'x', { doc: PAN }]);
    expect(logged({}, (l) => l.error(e))).toContain(id);
    const safe = logged(SAFE_LOG_OPTIONS, (l) => l.error(e));
    expect(safe).not.toContain(id);
    expect(safe).not.toContain(PAN);
    expect(safe).toContain('23505');
  });
});
