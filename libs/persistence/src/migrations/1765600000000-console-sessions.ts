import { MigrationInterface, QueryRunner } from 'typeorm';
import { applyRoleGrants } from '../roles';

/**
 * The console's sign-ins as server-side records, so signing out (or operator:revoke) ends a
 * session even if its cookie was copied. The cookie carries a random 128-bit session id; only
 * its SHA-256 is stored here (a read of this table gives nobody a usable session). A session is
 * valid while ended_at is NULL and expires_at is ahead; rows ended or expired over 7 days ago are
 * deleted at sign-in (index on whichever came first). After the roles migration, so it grants
 * the new table itself.
 */
export class ConsoleSessions1765600000000 implements MigrationInterface {
  name = 'ConsoleSessions1765600000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`CREATE TABLE console_sessions (
      id_hash bytea PRIMARY KEY CHECK (octet_length(id_hash) = 32),
      operator_id uuid NOT NULL REFERENCES operators (id),
      created_at timestamptz NOT NULL DEFAULT now(),
      expires_at timestamptz NOT NULL,
      ended_at timestamptz,
      last_seen_at timestamptz NOT NULL DEFAULT now(),
      created_ip text CHECK (length(created_ip) <= 64),
      CHECK (expires_at > created_at)
    )`);
    await q.query(`CREATE INDEX console_sessions_open ON console_sessions (operator_id) WHERE ended_at IS NULL`);
    await q.query(`CREATE INDEX console_sessions_over ON console_sessions ((LEAST(ended_at, expires_at)))`);
    await applyRoleGrants(q);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP TABLE console_sessions`);
  }
}
