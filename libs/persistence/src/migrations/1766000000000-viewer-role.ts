import { MigrationInterface, QueryRunner } from 'typeorm';
import { applyRoleGrants, applyRoleTimeouts, createRoles, quoteIdent } from '../roles';

/**
 * Operators' power on the server (issue 32): the operator role is now the admin app's alone (and
 * the break-glass login's), and a person who wants to read the database gets gateway_viewer, a
 * login that reads what the console shows and can change nothing.
 */
export class ViewerRole1766000000000 implements MigrationInterface {
  name = 'ViewerRole1766000000000';

  async up(q: QueryRunner): Promise<void> {
    await createRoles(q);
    await applyRoleTimeouts(q);
    await applyRoleGrants(q);
  }

  async down(q: QueryRunner): Promise<void> {
    const role = quoteIdent('gateway_viewer');
    const [{ db }] = (await q.query('SELECT current_database() AS db')) as { db: string }[];
    await q.query(`REVOKE ALL ON ALL TABLES IN SCHEMA public, vault FROM ${role}`);
    await q.query(`REVOKE ALL ON SCHEMA vault, public FROM ${role}`);
    await q.query(`REVOKE ALL ON DATABASE ${quoteIdent(db)} FROM ${role}`);
    await q.query(`ALTER ROLE ${role} IN DATABASE ${quoteIdent(db)} RESET ALL`);
    // Dropped only when no other database still grants it anything.
    await q.query(`DO $$ BEGIN
        DROP ROLE IF EXISTS ${role};
      EXCEPTION WHEN dependent_objects_still_exist OR object_in_use THEN
        RAISE NOTICE 'role gateway_viewer is still used by another database: left in place';
      END $$`);
  }
}
