import { MigrationInterface, QueryRunner } from 'typeorm';
import { applyRoleGrants } from '../roles';

/**
 * Merchant portal links (merchant:portal-link): one row per link issued, so a link can be revoked
 * (merchant:portal-revoke) and a token whose signature checks but whose id was never issued is
 * refused. The token itself is never stored (it is an HMAC over the row's id, merchant and expiry).
 * After the roles migration, so it grants the new table itself.
 */
export class PortalLinks1765400000000 implements MigrationInterface {
  name = 'PortalLinks1765400000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`CREATE TABLE portal_links (
      id uuid PRIMARY KEY,
      merchant_id uuid NOT NULL REFERENCES merchants (id),
      expires_at timestamptz NOT NULL,
      created_by uuid NOT NULL REFERENCES operators (id),
      created_at timestamptz NOT NULL DEFAULT now(),
      revoked_at timestamptz,
      revoked_by uuid REFERENCES operators (id),
      CHECK (expires_at > created_at),
      CHECK ((revoked_at IS NULL) = (revoked_by IS NULL))
    )`);
    await q.query(`CREATE INDEX portal_links_merchant ON portal_links (merchant_id, created_at)`);
    await applyRoleGrants(q);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP TABLE portal_links`);
  }
}
