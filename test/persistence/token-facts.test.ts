import { randomBytes, randomUUID } from 'node:crypto';
import { Client } from 'pg';
import { DataSource } from 'typeorm';
import { dataSourceOptions } from '@app/persistence';
import { createDatabaseIfMissing, dropDatabase, roleUrl, withDatabase } from '../../scripts/lib/database';

jest.setTimeout(120_000);

/**
 * The TokenFacts migration over a vault that already holds tokens (real Postgres, a database of
 * its own): every token gets its facts from the vault's clear columns, and the api's role reads
 * them there while the vault stays closed to it.
 */
describe('token_facts migration (real Postgres)', () => {
  const url = withDatabase(process.env.DATABASE_URL!, `gw_token_facts_${process.pid}`);
  let db: DataSource;

  beforeAll(async () => {
    await createDatabaseIfMissing(url);
    db = await new DataSource(dataSourceOptions(url, 1)).initialize();
    await db.runMigrations({ transaction: 'each' });
  });

  afterAll(async () => {
    await db?.destroy();
    await dropDatabase(url);
  });

  it('backfills the facts of tokens vaulted before it, from non-secret columns only', async () => {
    // Back to before the migration: the vault as the previous release left it (the later
    // migrations undone first, each by its own down).
    const lastName = async () => (await db.query<{ name: string }[]>('SELECT name FROM migrations ORDER BY id DESC LIMIT 1'))[0].name;
    const later = [
      'AttemptTraces1766400000000',
      'ConsoleRole1766300000000',
      'AcquirerAccounts1766200000000',
      'AuditRetention1766100000000',
      'OperatorRoles1766000000000',
      'Rebills1765900000000',
    ];
    while (later.includes(await lastName())) await db.undoLastMigration({ transaction: 'each' });
    expect(await lastName()).toBe('TokenFacts1765800000000');
    await db.undoLastMigration({ transaction: 'each' });
    const merchants = [randomUUID(), randomUUID()];
    const tokens = Array.from({ length: 30 }, (_, i) => ({ token: randomBytes(32).toString('hex'), merchant: merchants[i % 2], i }));
    for (const t of tokens) {
      await db.query(
        `INSERT INTO vault.token_cards (token, merchant_id, fingerprint, exp_year, exp_month, masked, brand, holder, billing, kek_id, wrapped_key, ciphertext, created_at)
         VALUES ($1, $2, $3, 2030, $4, '411111******1111', 'visa', $5, $6, 'k1', $7, $8, now() - make_interval(days => $9))`,
        [
          t.token,
          t.merchant,
          `fp-${t.i}`,
          (t.i % 12) + 1,
          `HOLDER ${t.i}`,
          t.i % 3 ? { name: `Buyer ${t.i}` } : null,
          randomBytes(40),
          randomBytes(60),
          t.i,
        ],
      );
    }
    await db.runMigrations({ transaction: 'each' });

    const columns = 'token, merchant_id, masked, brand, holder, exp_year, exp_month, billing, created_at';
    const vault = await db.query(`SELECT ${columns} FROM vault.token_cards ORDER BY token`);
    const facts = await db.query(`SELECT ${columns} FROM token_facts ORDER BY token`);
    expect(facts).toHaveLength(tokens.length);
    expect(facts).toEqual(vault);
    // Nothing secret was carried over: the table has no column for it.
    const { length } = await db.query(
      `SELECT 1 FROM information_schema.columns WHERE table_name = 'token_facts'
       AND column_name IN ('fingerprint', 'kek_id', 'wrapped_key', 'ciphertext')`,
    );
    expect(length).toBe(0);

    // The api's role reads the facts, scoped by merchant in the query, and never the vault.
    const api = new Client({ connectionString: roleUrl(url, 'api') });
    await api.connect();
    try {
      const { rows } = await api.query('SELECT holder FROM token_facts WHERE token = $1 AND merchant_id = $2', [
        tokens[4].token,
        tokens[4].merchant,
      ]);
      expect(rows).toEqual([{ holder: 'HOLDER 4' }]);
      await expect(api.query('SELECT ciphertext FROM vault.token_cards LIMIT 1')).rejects.toMatchObject({ code: '42501' });
      await expect(api.query('SELECT masked FROM vault.token_cards LIMIT 1')).rejects.toMatchObject({ code: '42501' });
      await expect(api.query(`INSERT INTO token_facts (token) VALUES ('x')`)).rejects.toMatchObject({ code: '42501' });
    } finally {
      await api.end();
    }
  });
});
