import { Client } from 'pg';
import {
  APP_ROLES,
  Columns,
  databaseIdentity,
  dataSourceOptions,
  FUNCTION_GRANTS,
  GATEWAY_ROLES,
  GATEWAY_SCHEMAS,
  GatewayRole,
  identityProblem,
  MIGRATED_TABLES,
  OWNER_ONLY_TABLES,
  qualifiedTable,
  quoteIdent,
  ROLE_GRANTS,
  ROLE_TIMEOUTS,
  RoleOwner,
  scramVerifier,
} from '@app/persistence';
import { DataSource } from 'typeorm';
import { createDatabaseIfMissing, dropDatabase, roleUrl, withDatabase } from '../../scripts/lib/database';

jest.setTimeout(120_000);

/**
 * Every gateway role, connected as itself to the run's migrated database (real Postgres), tries
 * every privilege on every table and column the schema holds (read from information_schema, so a
 * table or column added later is probed too): what ROLE_GRANTS grants must work, everything else
 * must be refused with 42501. Nothing is written: each probe touches no row, in a transaction
 * that is rolled back.
 */
type Probe = { what: string; sql: string; allowed: boolean };
/** 'ok', 'refused', or an unexpected failure as "code: message". */
type Outcome = string;

const OWNER_URL = (): string => process.env.DATABASE_URL!;
const ownerOf: Record<GatewayRole, RoleOwner> = Object.fromEntries(Object.entries(APP_ROLES).map(([app, role]) => [role, app])) as Record<
  GatewayRole,
  RoleOwner
>;

const covers = (granted: Columns | undefined, column: string): boolean => granted === 'all' || (granted ?? []).includes(column);

async function connectAs(role: GatewayRole): Promise<Client> {
  const c = new Client({ connectionString: roleUrl(OWNER_URL(), ownerOf[role]) });
  await c.connect();
  return c;
}

describe('database roles (real Postgres)', () => {
  let owner: Client;
  /** table as the map names it ("merchants", "vault.token_cards") → its columns. */
  const schema = new Map<string, string[]>();
  const sequences = new Map<string, string[]>();

  beforeAll(async () => {
    owner = new Client({ connectionString: OWNER_URL() });
    await owner.connect();
    const { rows } = await owner.query<{ table_schema: string; table_name: string; column_name: string }>(
      `SELECT c.table_schema, c.table_name, c.column_name FROM information_schema.columns c
       JOIN information_schema.tables t USING (table_schema, table_name)
       WHERE c.table_schema = ANY($1) AND t.table_type = 'BASE TABLE'
         -- A partition (delivery_attempts' days) is reached through its parent, whose grants are the ones checked.
         AND NOT (SELECT relispartition FROM pg_class WHERE oid = format('%I.%I', c.table_schema, c.table_name)::regclass)
       ORDER BY c.table_schema, c.table_name, c.ordinal_position`,
      [GATEWAY_SCHEMAS],
    );
    for (const r of rows) {
      const name = r.table_schema === 'public' ? r.table_name : `${r.table_schema}.${r.table_name}`;
      schema.set(name, [...(schema.get(name) ?? []), r.column_name]);
    }
    for (const table of schema.keys()) {
      const seqs = await owner.query<{ seq: string }>(
        `SELECT s.oid::regclass::text AS seq FROM pg_depend d JOIN pg_class s ON s.oid = d.objid
         WHERE d.classid = 'pg_class'::regclass AND d.refclassid = 'pg_class'::regclass AND d.refobjid = $1::regclass AND s.relkind = 'S'`,
        [qualifiedTable(table)],
      );
      sequences.set(
        table,
        seqs.rows.map((s) => s.seq),
      );
    }
  });

  afterAll(async () => {
    await owner?.end();
  });

  it('names every table of the schema, and only tables and columns that exist', () => {
    expect(schema.size).toBeGreaterThan(10);
    const mentioned = new Set([...OWNER_ONLY_TABLES, ...GATEWAY_ROLES.flatMap((r) => Object.keys(ROLE_GRANTS[r]))]);
    // A table here was added without a line in ROLE_GRANTS (or OWNER_ONLY_TABLES): decide who may use it.
    expect([...schema.keys()].filter((t) => !mentioned.has(t))).toEqual([]);
    expect([...mentioned].filter((t) => !schema.has(t))).toEqual([]);
    // The list applyRoleGrants checks names against is the migrated schema, no more, no less.
    expect(Object.keys(MIGRATED_TABLES).sort()).toEqual([...schema.keys()].filter((t) => !OWNER_ONLY_TABLES.includes(t)).sort());
    const unknownColumns = GATEWAY_ROLES.flatMap((role) =>
      Object.entries(ROLE_GRANTS[role]).flatMap(([table, p]) =>
        [p.select, p.insert, p.update].flatMap((cols) =>
          Array.isArray(cols) ? cols.filter((c) => !schema.get(table)?.includes(c)).map((c) => `${role} ${table}.${c}`) : [],
        ),
      ),
    );
    expect(unknownColumns).toEqual([]);
  });

  /** Every statement a role could try on the schema, each with whether the map allows it. */
  function probesFor(role: GatewayRole): Probe[] {
    const probes: Probe[] = [];
    for (const [table, columns] of schema) {
      const p = ROLE_GRANTS[role][table] ?? {};
      const t = qualifiedTable(table);
      for (const col of columns) {
        const c = quoteIdent(col);
        probes.push({ what: `SELECT ${table}.${col}`, sql: `SELECT ${c} FROM ${t} WHERE false`, allowed: covers(p.select, col) });
        probes.push({
          what: `INSERT ${table}.${col}`,
          sql: `INSERT INTO ${t} (${c}) SELECT NULL WHERE false`,
          allowed: covers(p.insert, col),
        });
        probes.push({ what: `UPDATE ${table}.${col}`, sql: `UPDATE ${t} SET ${c} = DEFAULT WHERE false`, allowed: covers(p.update, col) });
      }
      probes.push({ what: `DELETE ${table}`, sql: `DELETE FROM ${t} WHERE false`, allowed: p.delete === true });
      probes.push({ what: `TRUNCATE ${table}`, sql: `TRUNCATE ${t}`, allowed: false });
      // An INSERT that fills a serial column takes the sequence's next value.
      for (const seq of sequences.get(table) ?? [])
        probes.push({ what: `nextval ${seq}`, sql: `SELECT nextval('${seq}')`, allowed: p.insert !== undefined });
    }
    return probes;
  }

  it.each(GATEWAY_ROLES)('%s may do exactly what the map grants, and is refused (42501) everything else', async (role) => {
    const probes = probesFor(role);
    expect(probes.filter((p) => p.allowed).length).toBeGreaterThan(0);
    const db = await connectAs(role);
    const outcomes: { what: string; expected: Outcome; got: Outcome }[] = [];
    try {
      await db.query('BEGIN');
      for (const probe of probes) {
        await db.query('SAVEPOINT probe');
        let got: Outcome = 'ok';
        try {
          await db.query(probe.sql);
        } catch (e) {
          const err = e as { code?: string; message: string };
          // 428C9: an identity column GENERATED ALWAYS (audit_events.id) takes no value from anyone,
          // which Postgres says before it checks the grant: refused just the same.
          got = err.code === '42501' || err.code === '428C9' ? 'refused' : `${err.code}: ${err.message}`;
        }
        await db.query('ROLLBACK TO SAVEPOINT probe');
        outcomes.push({ what: probe.what, expected: probe.allowed ? 'ok' : 'refused', got });
      }
    } finally {
      await db.query('ROLLBACK').catch(() => undefined);
      await db.end();
    }
    expect(outcomes.filter((o) => o.got !== o.expected)).toEqual([]);
  });

  // Trigger functions are left out: nobody can call one (only its trigger runs it).
  it('lets only the roles of FUNCTION_GRANTS execute each function that runs as the owner (SECURITY DEFINER), and names every one', async () => {
    const { rows } = await owner.query<{ fn: string; role: string | null }>(
      `SELECT p.oid::regprocedure::text AS fn, r.rolname AS role
       FROM pg_proc p LEFT JOIN pg_roles r ON r.rolname = ANY($1) AND has_function_privilege(r.rolname, p.oid, 'EXECUTE')
       WHERE p.prosecdef AND p.prorettype <> 'trigger'::regtype AND p.pronamespace = ANY(SELECT oid FROM pg_namespace WHERE nspname = ANY($2))`,
      [GATEWAY_ROLES, GATEWAY_SCHEMAS],
    );
    const actual: Record<string, string[]> = {};
    for (const r of rows) actual[r.fn] = [...(actual[r.fn] ?? []), ...(r.role ? [r.role] : [])].sort();
    const expected: Record<string, string[]> = {};
    for (const [signature, { roles }] of Object.entries(FUNCTION_GRANTS)) {
      const { rows: fn } = await owner.query<{ fn: string }>('SELECT to_regprocedure($1)::text AS fn', [signature]);
      expected[fn[0].fn] = [...roles].sort();
    }
    expect(actual).toEqual(expected);
    // And not to anyone through PUBLIC.
    const { rows: pub } = await owner.query<{ fn: string }>(
      `SELECT p.oid::regprocedure::text AS fn FROM pg_proc p, aclexplode(coalesce(p.proacl, acldefault('f', p.proowner))) a
       WHERE p.prosecdef AND p.prorettype <> 'trigger'::regtype AND a.grantee = 0 AND a.privilege_type = 'EXECUTE'`,
    );
    expect(pub).toEqual([]);
  });

  it('keeps the vault to the tokenizer (and the rotation columns to the operator), and the webhook secrets from the api', async () => {
    const refusal = async (role: GatewayRole, sql: string): Promise<string | undefined> => {
      const db = await connectAs(role);
      try {
        await db.query(sql);
        return undefined;
      } catch (e) {
        return `${(e as { code?: string }).code} ${(e as Error).message}`;
      } finally {
        await db.end();
      }
    };
    for (const role of ['gateway_api', 'gateway_settlement', 'gateway_notifier'] as const) {
      expect(await refusal(role, 'SELECT ciphertext, wrapped_key FROM vault.token_cards LIMIT 1')).toBe(
        '42501 permission denied for schema vault',
      );
    }
    expect(await refusal('gateway_tokenizer', 'SELECT ciphertext, wrapped_key FROM vault.token_cards LIMIT 1')).toBeUndefined();
    expect(await refusal('gateway_operator', 'SELECT kek_id, wrapped_key, ciphertext FROM vault.token_cards LIMIT 1')).toBeUndefined();
    expect(await refusal('gateway_operator', 'SELECT holder, billing FROM vault.token_cards LIMIT 1')).toBe(
      '42501 permission denied for table token_cards',
    );
    expect(await refusal('gateway_api', 'SELECT webhook_secret_sealed FROM merchants LIMIT 1')).toBe(
      '42501 permission denied for table merchants',
    );
    expect(await refusal('gateway_api', 'SELECT key_hash FROM merchants LIMIT 1')).toBeUndefined();
    // A token's non-secret facts are the api's to read; the vault row behind them is not.
    expect(
      await refusal('gateway_api', 'SELECT token, merchant_id, masked, brand, holder, billing FROM token_facts LIMIT 1'),
    ).toBeUndefined();
    for (const role of ['gateway_settlement', 'gateway_notifier', 'gateway_operator', 'gateway_tokenizer'] as const) {
      expect(await refusal(role, 'SELECT masked FROM token_facts LIMIT 1')).toBe('42501 permission denied for table token_facts');
    }
  });

  it('makes each role a plain login (no superuser, database or role creation, no RLS bypass)', async () => {
    const { rows } = await owner.query(
      `SELECT rolname, rolcanlogin, rolsuper, rolcreatedb, rolcreaterole, rolreplication, rolbypassrls FROM pg_roles WHERE rolname = ANY($1) ORDER BY rolname`,
      [GATEWAY_ROLES],
    );
    expect(rows).toEqual(
      [...GATEWAY_ROLES].sort().map((rolname) => ({
        rolname,
        rolcanlogin: true,
        rolsuper: false,
        rolcreatedb: false,
        rolcreaterole: false,
        rolreplication: false,
        rolbypassrls: false,
      })),
    );
  });

  it.each(GATEWAY_ROLES)('%s runs with its statement, lock and idle-in-transaction timeouts in this database', async (role) => {
    const db = await connectAs(role);
    try {
      const got: Record<string, string> = {};
      for (const setting of Object.keys(ROLE_TIMEOUTS[role])) got[setting] = (await db.query(`SHOW ${setting}`)).rows[0][setting];
      expect(got).toEqual(ROLE_TIMEOUTS[role]);
      // The bound holds (one app role is enough: SHOW proved the others' values): a statement
      // longer than it is cancelled (57014), and the session goes on.
      if (role === 'gateway_api') {
        await expect(db.query('SELECT pg_sleep(6)')).rejects.toMatchObject({ code: '57014' });
        expect((await db.query('SELECT 1 AS one')).rows[0].one).toBe(1);
      }
    } finally {
      await db.end();
    }
  });

  it('tells a role of its own from a superuser or the tables owner (the boot check)', async () => {
    const rows = (c: Client) => ({ query: async (sql: string, params?: unknown[]) => (await c.query(sql, params)).rows });
    const own = await databaseIdentity(rows(owner));
    expect(identityProblem(own, 'api')).toMatch(
      /^DATABASE_URL connects as "[^"]+", (a superuser|the owner of the gateway's tables): api must connect as its own role gateway_api/,
    );
    const db = await connectAs('gateway_api');
    try {
      const id = await databaseIdentity(rows(db));
      expect(id).toEqual({ user: 'gateway_api', superuser: false, ownsTables: false });
      expect(identityProblem(id, 'api')).toBeUndefined();
    } finally {
      await db.end();
    }
  });

  it('sets a password as the SCRAM verifier Postgres itself would store, never the password itself', async () => {
    // Postgres hashes a password it is given (salt random); the same password and salt must give our verifier.
    const probe = `gateway_scram_probe_${process.pid}`;
    await owner.query(`SET password_encryption = 'scram-sha-256'`);
    await owner.query(`CREATE ROLE ${quoteIdent(probe)} LOGIN PASSWORD 'correct horse'`);
    try {
      const { rows } = await owner.query<{ stored: string }>('SELECT rolpassword AS stored FROM pg_authid WHERE rolname = $1', [probe]);
      const [, iterations, salt] = /^SCRAM-SHA-256\$(\d+):([^$]+)\$/.exec(rows[0].stored)!;
      expect(scramVerifier('correct horse', Buffer.from(salt, 'base64'), Number(iterations))).toBe(rows[0].stored);
      expect(scramVerifier('correct horse')).not.toContain('correct horse');
    } finally {
      await owner.query(`DROP ROLE ${quoteIdent(probe)}`);
    }
  });

  it('down() revokes this database grants and bounds, and leaves roles another database still uses', async () => {
    const url = withDatabase(OWNER_URL(), `gw_roles_down_${process.pid}`);
    await createDatabaseIfMissing(url);
    const db = await new DataSource(dataSourceOptions(url, 1)).initialize();
    try {
      await db.runMigrations({ transaction: 'each' });
      const granted = async () =>
        (
          await db.query(
            `SELECT (SELECT count(*) FROM information_schema.table_privileges WHERE grantee = ANY($1))::int
                + (SELECT count(*) FROM information_schema.column_privileges WHERE grantee = ANY($1))::int AS grants,
                  (SELECT count(*) FROM pg_db_role_setting WHERE setdatabase = (SELECT oid FROM pg_database WHERE datname = current_database()))::int AS settings`,
            [GATEWAY_ROLES],
          )
        )[0];
      expect(await granted()).toEqual({ grants: expect.any(Number), settings: GATEWAY_ROLES.length });
      expect((await granted()).grants).toBeGreaterThan(50);
      // Back to before the roles migration: the migrations after it (tables it did not know) go first.
      for (;;) {
        const [last] = await db.query<{ name: string }[]>('SELECT name FROM migrations ORDER BY id DESC LIMIT 1');
        await db.undoLastMigration({ transaction: 'each' });
        if (last.name.startsWith('DatabaseRoles')) break;
      }
      expect(await granted()).toEqual({ grants: 0, settings: 0 });
      // The run's own database still grants to them: they stay, and its apps keep working.
      const { rows } = await owner.query('SELECT count(*)::int AS n FROM pg_roles WHERE rolname = ANY($1)', [GATEWAY_ROLES]);
      expect(rows[0].n).toBe(GATEWAY_ROLES.length);
      // And up() again, over roles that already exist, grants the same again.
      await db.runMigrations({ transaction: 'each' });
      expect((await granted()).settings).toBe(GATEWAY_ROLES.length);
    } finally {
      await db.destroy();
      await dropDatabase(url);
    }
  });
});
