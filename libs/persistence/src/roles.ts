import type { RoleGrants, Columns } from './grant-columns';
import { FUNCTION_GRANTS, unknownGrantTables } from './migrated-objects';
import type { Queryable } from './migrations/1764500000000-merchant-public-ids';
import { GATEWAY_ROLES, GATEWAY_SCHEMAS, GatewayRole } from './role-catalogue';
import { ROLE_GRANTS } from './role-grants';
import { currentDatabase, rowsOf } from './query-rows';
import { ROLE_PASSWORD_VARIABLES, ROLE_TIMEOUTS, RoleTimeouts, scramVerifier } from './role-settings';

/**
 * The SQL that applies the role catalogue (role-catalogue.ts), its grants (role-grants.ts) and its
 * settings (role-settings.ts) to a database: the migrations and the migration runner call it.
 */

// Migration 1765700000000 imports APP_ROLES from here, and a shipped migration does not change.
export { APP_ROLES } from './role-catalogue';

export const quoteIdent = (name: string): string => `"${name.replace(/"/g, '""')}"`;

/** "vault.token_cards" → "vault"."token_cards"; "merchants" → "public"."merchants". */
export function qualifiedTable(table: string): string {
  const [schema, name] = table.includes('.') ? table.split('.', 2) : ['public', table];
  return `${quoteIdent(schema)}.${quoteIdent(name)}`;
}

function columnList(columns: Columns): string {
  return columns === 'all' ? '' : ` (${columns.map(quoteIdent).join(', ')})`;
}

const roleList = (): string => GATEWAY_ROLES.map(quoteIdent).join(', ');

/**
 * Creates the roles that do not exist yet (LOGIN, nothing else). Safe to run from many databases
 * at once: a role another migration created first (duplicate_object, or unique_violation when
 * both inserted at the same moment) is taken as it is, once its attributes are checked.
 */
export async function createRoles(q: Queryable): Promise<void> {
  for (const role of GATEWAY_ROLES) {
    await q.query(`DO $$ BEGIN
      CREATE ROLE ${quoteIdent(role)} LOGIN NOSUPERUSER NOCREATEDB NOCREATEROLE NOREPLICATION NOBYPASSRLS;
    EXCEPTION WHEN duplicate_object OR unique_violation THEN NULL;
    END $$`);
    // A role that existed before with more power than it needs is brought back to LOGIN only
    // (only then: altering a shared role from concurrent migrations could collide).
    const [r] = await rowsOf<{ ok: boolean }>(
      q,
      `SELECT rolcanlogin AND NOT rolsuper AND NOT rolcreatedb AND NOT rolcreaterole AND NOT rolreplication AND NOT rolbypassrls AS ok FROM pg_roles WHERE rolname = $1`,
      [role],
    );
    if (!r.ok) await q.query(`ALTER ROLE ${quoteIdent(role)} LOGIN NOSUPERUSER NOCREATEDB NOCREATEROLE NOREPLICATION NOBYPASSRLS`);
  }
}

/** Takes every privilege of PUBLIC and of the gateway roles on this database's gateway tables and sequences. */
async function revokeAll(q: Queryable, db: string): Promise<void> {
  const schemas = GATEWAY_SCHEMAS.map(quoteIdent).join(', ');
  await q.query(`REVOKE ALL ON ALL TABLES IN SCHEMA ${schemas} FROM PUBLIC, ${roleList()}`);
  await q.query(`REVOKE ALL ON ALL SEQUENCES IN SCHEMA ${schemas} FROM PUBLIC, ${roleList()}`);
  await q.query(`REVOKE ALL ON ALL FUNCTIONS IN SCHEMA ${schemas} FROM ${roleList()}`);
  await q.query(`REVOKE ALL ON SCHEMA vault FROM PUBLIC, ${roleList()}`);
  await q.query(`REVOKE ALL ON SCHEMA public FROM ${roleList()}`);
  await q.query(`REVOKE ALL ON DATABASE ${quoteIdent(db)} FROM ${roleList()}`);
}

/**
 * The columns of every gateway table that exists now, by table as ROLE_GRANTS names it
 * ("vault.token_cards", "merchants").
 */
async function existingColumns(q: Queryable): Promise<Map<string, Set<string>>> {
  const rows = await rowsOf<{ s: string; t: string; c: string }>(
    q,
    `SELECT table_schema AS s, table_name AS t, column_name AS c FROM information_schema.columns WHERE table_schema = ANY($1::text[])`,
    [GATEWAY_SCHEMAS],
  );
  const out = new Map<string, Set<string>>();
  for (const { s, t, c } of rows) {
    const table = s === 'public' ? t : `${s}.${t}`;
    out.set(table, (out.get(table) ?? new Set()).add(c));
  }
  return out;
}

/**
 * Makes this database's grants exactly ROLE_GRANTS: everything is revoked from the roles and
 * from PUBLIC on the gateway's tables, then the map is granted. A migration that adds a table
 * or a column (and its line in the map) calls this again. The map is always the latest one, so
 * what a later migration creates is left out until that migration grants it (the roles test
 * checks the map names only tables and columns the migrated schema has). Only a table listed in
 * MIGRATED_TABLES is skipped that way: any other name throws before anything is revoked.
 */
export async function applyRoleGrants(q: Queryable, roleGrants: Readonly<Record<GatewayRole, RoleGrants>> = ROLE_GRANTS): Promise<void> {
  // Before any statement: a name no migration creates would otherwise be skipped as "not yet created".
  const unknown = unknownGrantTables(roleGrants);
  if (unknown.length)
    throw new Error(`ROLE_GRANTS names tables no migration creates (misspelled, or missing from MIGRATED_TABLES): ${unknown.join(', ')}`);
  const db = await currentDatabase(q);
  const existing = await existingColumns(q);
  const present = (table: string, columns: Columns | undefined): Columns | undefined =>
    columns === undefined || columns === 'all' ? columns : columns.filter((c) => existing.get(table)?.has(c));
  const nonEmpty = (columns: Columns | undefined): columns is Columns => columns === 'all' || (columns !== undefined && columns.length > 0);
  await revokeAll(q, db);
  // Nobody but the owner creates objects in public (the default before Postgres 15 let anyone).
  await q.query(`REVOKE CREATE ON SCHEMA public FROM PUBLIC`);
  for (const role of GATEWAY_ROLES) {
    const r = quoteIdent(role);
    await q.query(`GRANT CONNECT ON DATABASE ${quoteIdent(db)} TO ${r}`);
    await q.query(`GRANT USAGE ON SCHEMA public TO ${r}`);
    const grants = roleGrants[role];
    if (Object.keys(grants).some((t) => t.startsWith('vault.'))) await q.query(`GRANT USAGE ON SCHEMA vault TO ${r}`);
    for (const [table, granted] of Object.entries(grants)) {
      if (!existing.has(table)) continue; // a known table a later migration creates (and grants)
      const p = { select: present(table, granted.select), insert: present(table, granted.insert), update: present(table, granted.update) };
      const t = qualifiedTable(table);
      if (nonEmpty(p.select)) await q.query(`GRANT SELECT${columnList(p.select)} ON ${t} TO ${r}`);
      if (nonEmpty(p.insert)) {
        await q.query(`GRANT INSERT${columnList(p.insert)} ON ${t} TO ${r}`);
        // The sequences behind the table's serial columns: an INSERT takes their next value.
        const seqs = await rowsOf<{ seq: string }>(
          q,
          `SELECT s.oid::regclass::text AS seq FROM pg_depend d JOIN pg_class s ON s.oid = d.objid
           WHERE d.classid = 'pg_class'::regclass AND d.refclassid = 'pg_class'::regclass AND d.refobjid = $1::regclass AND s.relkind = 'S'`,
          [t],
        );
        for (const { seq } of seqs) await q.query(`GRANT USAGE ON SEQUENCE ${seq} TO ${r}`);
      }
      if (nonEmpty(p.update)) await q.query(`GRANT UPDATE${columnList(p.update)} ON ${t} TO ${r}`);
      if (granted.delete) await q.query(`GRANT DELETE ON ${t} TO ${r}`);
    }
  }
  for (const [signature, { roles }] of Object.entries(FUNCTION_GRANTS)) {
    const [fn] = await rowsOf<{ exists: boolean }>(q, 'SELECT to_regprocedure($1) IS NOT NULL AS exists', [signature]);
    if (!fn.exists) continue; // a later migration creates it (and grants it)
    await q.query(`REVOKE ALL ON FUNCTION ${signature} FROM PUBLIC, ${roleList()}`);
    if (roles.length) await q.query(`GRANT EXECUTE ON FUNCTION ${signature} TO ${roles.map(quoteIdent).join(', ')}`);
  }
}

/** Sets ROLE_TIMEOUTS for this database (ALTER ROLE … IN DATABASE … SET). */
export async function applyRoleTimeouts(q: Queryable): Promise<void> {
  const db = quoteIdent(await currentDatabase(q));
  for (const role of GATEWAY_ROLES) {
    const timeouts = ROLE_TIMEOUTS[role];
    for (const setting of Object.keys(timeouts) as (keyof RoleTimeouts)[]) {
      const value = timeouts[setting];
      await q.query(`ALTER ROLE ${quoteIdent(role)} IN DATABASE ${db} SET ${setting} = '${value.replace(/'/g, "''")}'`);
    }
  }
}

/**
 * Undoes this database's part: every grant and the roles' settings here. A role is dropped only
 * when no other database still holds anything of it (Postgres refuses the DROP then: that is the
 * check, race-free); otherwise it stays, and the returned list says which stayed.
 */
export async function removeRoles(q: Queryable): Promise<GatewayRole[]> {
  const db = await currentDatabase(q);
  await revokeAll(q, db);
  const kept: GatewayRole[] = [];
  for (const role of GATEWAY_ROLES) {
    await q.query(`ALTER ROLE ${quoteIdent(role)} IN DATABASE ${quoteIdent(db)} RESET ALL`);
    await q.query(`DO $$ BEGIN
        DROP ROLE IF EXISTS ${quoteIdent(role)};
      EXCEPTION WHEN dependent_objects_still_exist OR object_in_use THEN
        RAISE NOTICE 'role ${role} is still used by another database: left in place';
      END $$`);
    const [r] = await rowsOf<{ kept: boolean }>(q, 'SELECT EXISTS (SELECT 1 FROM pg_roles WHERE rolname = $1) AS kept', [role]);
    if (r.kept) kept.push(role);
  }
  return kept;
}

/**
 * Sets the password of each role whose variable (ROLE_PASSWORD_VARIABLES) is set, as a SCRAM
 * verifier. Returns the roles it set (never the passwords).
 */
export async function setRolePasswords(q: Queryable, env: NodeJS.ProcessEnv = process.env): Promise<GatewayRole[]> {
  const set: GatewayRole[] = [];
  for (const role of GATEWAY_ROLES) {
    const password = env[ROLE_PASSWORD_VARIABLES[role]];
    if (!password) continue;
    await q.query(`ALTER ROLE ${quoteIdent(role)} PASSWORD '${scramVerifier(password)}'`);
    set.push(role);
  }
  return set;
}

/**
 * The whole catalogue on this database: the roles that do not exist yet, their settings and their
 * grants (a migration that adds a role).
 */
export async function applyRoleCatalogue(q: Queryable): Promise<void> {
  await createRoles(q);
  await applyRoleTimeouts(q);
  await applyRoleGrants(q);
}
