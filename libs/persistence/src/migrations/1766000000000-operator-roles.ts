import { MigrationInterface, QueryRunner } from 'typeorm';
import { applyRoleGrants, applyRoleTimeouts, createRoles, quoteIdent } from '../roles';

/**
 * Operators' power on the server (issue 32): gateway_operator is now the admin app's alone; the
 * break-glass passes (key rotations, retention:run, the first admin) run as gateway_breakglass,
 * which no operator holds day to day; and a person who wants to read the database gets
 * gateway_viewer, a login that reads what the console shows and can change nothing.
 */
export class OperatorRoles1766000000000 implements MigrationInterface {
  name = 'OperatorRoles1766000000000';

  async up(q: QueryRunner): Promise<void> {
    await createRoles(q);
    await applyRoleTimeouts(q);
    await applyRoleGrants(q);
  }

  async down(q: QueryRunner): Promise<void> {
    const [{ db }] = (await q.query('SELECT current_database() AS db')) as { db: string }[];
    for (const name of ['gateway_viewer', 'gateway_breakglass']) {
      const role = quoteIdent(name);
      await q.query(`REVOKE ALL ON ALL TABLES IN SCHEMA public, vault FROM ${role}`);
      await q.query(`REVOKE ALL ON ALL SEQUENCES IN SCHEMA public, vault FROM ${role}`);
      await q.query(`REVOKE ALL ON ALL FUNCTIONS IN SCHEMA public FROM ${role}`);
      await q.query(`REVOKE ALL ON SCHEMA vault, public FROM ${role}`);
      await q.query(`REVOKE ALL ON DATABASE ${quoteIdent(db)} FROM ${role}`);
      await q.query(`ALTER ROLE ${role} IN DATABASE ${quoteIdent(db)} RESET ALL`);
      // Dropped only when no other database still grants it anything.
      await q.query(`DO $$ BEGIN
          DROP ROLE IF EXISTS ${role};
        EXCEPTION WHEN dependent_objects_still_exist OR object_in_use THEN
          RAISE NOTICE 'role ${name} is still used by another database: left in place';
        END $$`);
    }
  }
}
