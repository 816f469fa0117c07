import { MigrationInterface, QueryRunner } from 'typeorm';
import { applyRoleGrants } from '../roles';

/**
 * Listener health (issue 16, item 2): one row per merchant × listener origin (scheme://host:port
 * of the delivery URL), its state, since when it fails with no success, and who disabled it
 * ('auto' or an operator's id). Deliveries name their listener's origin (NULL for those created
 * before this migration: never held) and may be 'held': recorded but not attempted while their
 * listener is disabled; enabling it releases them in (created_at, id) order, hence the index.
 * After the roles migration, so it grants the new table and column itself.
 */
export class Listeners1765000000000 implements MigrationInterface {
  name = 'Listeners1765000000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`CREATE TABLE listeners (
      merchant_id uuid NOT NULL REFERENCES merchants (id),
      origin text NOT NULL CHECK (origin ~ '^https?://[^/?#]+:[0-9]+$'),
      state text NOT NULL DEFAULT 'enabled' CHECK (state IN ('enabled', 'disabled')),
      disabled_at timestamptz,
      disabled_by text CHECK (disabled_by = 'auto' OR disabled_by ~ '^[0-9a-f-]{36}$'),
      failing_since timestamptz,
      last_success_at timestamptz,
      last_failure_at timestamptz,
      consecutive_failures integer NOT NULL DEFAULT 0 CHECK (consecutive_failures >= 0),
      created_at timestamptz NOT NULL DEFAULT now(),
      updated_at timestamptz NOT NULL DEFAULT now(),
      PRIMARY KEY (merchant_id, origin),
      CHECK ((state = 'disabled') = (disabled_at IS NOT NULL AND disabled_by IS NOT NULL))
    )`);
    await q.query(`ALTER TABLE deliveries ADD COLUMN origin text`);
    await q.query(`ALTER TABLE deliveries DROP CONSTRAINT deliveries_status_check`);
    await q.query(`ALTER TABLE deliveries ADD CONSTRAINT deliveries_status_check
      CHECK (status IN ('pending', 'sending', 'succeeded', 'failed', 'blocked', 'held'))`);
    await q.query(`CREATE INDEX deliveries_held ON deliveries (merchant_id, origin, created_at, id) WHERE status = 'held'`);
    await applyRoleGrants(q);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`UPDATE deliveries SET status = 'pending', next_attempt_at = now() WHERE status = 'held'`);
    await q.query(`DROP INDEX deliveries_held`);
    await q.query(`ALTER TABLE deliveries DROP CONSTRAINT deliveries_status_check`);
    await q.query(`ALTER TABLE deliveries ADD CONSTRAINT deliveries_status_check
      CHECK (status IN ('pending', 'sending', 'succeeded', 'failed', 'blocked'))`);
    await q.query(`ALTER TABLE deliveries DROP COLUMN origin`);
    await q.query(`DROP TABLE listeners`);
  }
}
