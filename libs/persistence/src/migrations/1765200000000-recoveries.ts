import { MigrationInterface, QueryRunner } from 'typeorm';
import { applyRoleGrants } from '../roles';

/**
 * Recoveries (issue 16, "recover"): a bulk replay of one merchant's failed deliveries (optionally
 * one listener's) created from `since` until the recovery was started (`until`), run a page at a
 * time by the notifier. `cursor_*` is the (created_at, id) of the last delivery it replayed: a
 * page and its cursor move are one transaction, so a step run twice, or after a crash, goes on
 * from there and never replays a delivery twice. `states` says what counts as failed ('failed',
 * and 'blocked' when asked for). The index serves the count and the pages.
 */
export class Recoveries1765200000000 implements MigrationInterface {
  name = 'Recoveries1765200000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`CREATE TABLE recoveries (
      id uuid PRIMARY KEY,
      merchant_id uuid NOT NULL REFERENCES merchants (id),
      origin text CHECK (origin ~ '^https?://[^/?#]+:[0-9]+$'),
      since timestamptz NOT NULL,
      until timestamptz NOT NULL DEFAULT now(),
      states text[] NOT NULL CHECK (states <@ ARRAY['failed', 'blocked']::text[] AND cardinality(states) > 0),
      total integer NOT NULL CHECK (total >= 0),
      replayed integer NOT NULL DEFAULT 0 CHECK (replayed >= 0),
      skipped integer NOT NULL DEFAULT 0 CHECK (skipped >= 0),
      cursor_created_at timestamptz,
      cursor_id uuid,
      state text NOT NULL DEFAULT 'running' CHECK (state IN ('running', 'cancelled', 'finished', 'failed')),
      error text,
      created_by uuid NOT NULL REFERENCES operators (id),
      created_at timestamptz NOT NULL DEFAULT now(),
      updated_at timestamptz NOT NULL DEFAULT now(),
      finished_at timestamptz,
      CHECK ((state = 'running') = (finished_at IS NULL)),
      CHECK ((cursor_created_at IS NULL) = (cursor_id IS NULL))
    )`);
    await q.query(`CREATE INDEX recoveries_recent ON recoveries (created_at DESC)`);
    await q.query(`CREATE INDEX recoveries_running ON recoveries (updated_at) WHERE state = 'running'`);
    await q.query(`CREATE INDEX deliveries_unsucceeded ON deliveries (merchant_id, created_at, id) WHERE status IN ('failed', 'blocked')`);
    await applyRoleGrants(q);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP INDEX deliveries_unsucceeded`);
    await q.query(`DROP TABLE recoveries`);
  }
}
