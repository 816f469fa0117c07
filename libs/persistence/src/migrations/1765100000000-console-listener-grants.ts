import { MigrationInterface, QueryRunner } from 'typeorm';
import { applyRoleGrants } from '../roles';

/**
 * No schema change, grants only (ROLE_GRANTS): the api's console disables and enables listeners
 * (and releases their held deliveries, which it could already do for replays), and the notifier's
 * sweeper releases deliveries left held while their listener is enabled (a release counts a replay).
 */
export class ConsoleListenerGrants1765100000000 implements MigrationInterface {
  name = 'ConsoleListenerGrants1765100000000';

  async up(q: QueryRunner): Promise<void> {
    await applyRoleGrants(q);
  }

  /** Takes back exactly what up() added to the grants before it. */
  async down(q: QueryRunner): Promise<void> {
    await q.query(`REVOKE INSERT, UPDATE ON listeners FROM gateway_api`);
    await q.query(`REVOKE UPDATE (replays) ON deliveries FROM gateway_notifier`);
  }
}
