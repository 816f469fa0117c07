import { MigrationInterface, QueryRunner } from 'typeorm';
import { applyRoleGrants, applyRoleTimeouts, createRoles, removeRoles } from '../roles';

/**
 * A Postgres role per app (gateway_api, gateway_tokenizer, gateway_settlement, gateway_notifier)
 * and one for the operator CLI (gateway_operator), each granted only the tables and columns its
 * statements use (ROLE_GRANTS in roles.ts: the api, settlement and notifier cannot read the
 * vault at all; the operator reads only the sealed columns the key rotation rewraps), and bounded
 * statement, lock and idle-in-transaction timeouts (ROLE_TIMEOUTS, with the reasons for each
 * value). Last on purpose: it grants on every table before it. The roles belong to the cluster
 * and may already exist (another database migrated first, even at this moment); the grants and
 * timeouts are this database's.
 */
export class DatabaseRoles1764900000000 implements MigrationInterface {
  name = 'DatabaseRoles1764900000000';
  async up(q: QueryRunner): Promise<void> {
    await createRoles(q);
    await applyRoleGrants(q);
    await applyRoleTimeouts(q);
  }
  async down(q: QueryRunner): Promise<void> {
    const kept = await removeRoles(q);
    if (kept.length)
      process.stderr.write(
        `${this.name} down: ${kept.join(', ')} still used by another database; their grants here are revoked, the roles stay\n`,
      );
  }
}
