import { MigrationInterface, QueryRunner } from 'typeorm';
import { applyRoleCatalogue, quoteIdent } from '../roles';

/**
 * The console app (issue 1): the operators' console, the merchants' portal and /admin leave the
 * api's process for their own, connected as gateway_console. The grant map is applied again:
 * gateway_console gets what those pages read and write, and gateway_api, the internet-facing
 * role, loses it (operators, console sessions, portal links, deliveries and their attempts,
 * listeners, recoveries, the overview's counts, a merchant's webhook throttle) and the audit
 * retention function, which the console's retention pass now runs.
 */
export class ConsoleRole1766300000000 implements MigrationInterface {
  name = 'ConsoleRole1766300000000';

  async up(q: QueryRunner): Promise<void> {
    await applyRoleCatalogue(q);
  }

  async down(q: QueryRunner): Promise<void> {
    const [{ db }] = (await q.query('SELECT current_database() AS db')) as { db: string }[];
    const role = quoteIdent('gateway_console');
    // Every privilege granted to the role in this database (it owns no object) goes, then the role
    // itself when no other database still grants it anything. The api's former grants are not given
    // back: run the console's pages from the api again only with the code that went with them.
    await q.query(`DROP OWNED BY ${role}`);
    await q.query(`ALTER ROLE ${role} IN DATABASE ${quoteIdent(db)} RESET ALL`);
    await q.query(`DO $$ BEGIN
        DROP ROLE IF EXISTS ${role};
      EXCEPTION WHEN dependent_objects_still_exist OR object_in_use THEN
        RAISE NOTICE 'role gateway_console is still used by another database: left in place';
      END $$`);
  }
}
