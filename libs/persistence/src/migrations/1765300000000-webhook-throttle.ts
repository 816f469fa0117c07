import { MigrationInterface, QueryRunner } from 'typeorm';
import { applyRoleGrants } from '../roles';

/**
 * Per-listener webhook throttle (issue 16): a merchant's maximum deliveries per second to each of
 * its listeners, enforced by the notifiers together (a bucket per listener in Redis). NULL: no
 * throttle. The range is the one merchant:set-webhook-throttle and the console accept. Set by the
 * operator CLI and by the console (the api's role may update this one column); read by the notifier.
 */
export class WebhookThrottle1765300000000 implements MigrationInterface {
  name = 'WebhookThrottle1765300000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`ALTER TABLE merchants
      ADD COLUMN webhook_throttle_per_s integer,
      ADD CONSTRAINT merchants_webhook_throttle_range CHECK (webhook_throttle_per_s BETWEEN 1 AND 10000)`);
    await applyRoleGrants(q);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`ALTER TABLE merchants DROP COLUMN webhook_throttle_per_s`);
  }
}
