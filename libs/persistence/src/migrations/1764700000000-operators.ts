import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Operators as people (each with a role and a personal token, kept only as its SHA-256) and the
 * audit trail of what they did. The trail is append-only for everyone: a trigger refuses UPDATE,
 * DELETE and TRUNCATE whatever the role's grants (only the owner dropping the trigger, i.e. a
 * migration, can change that).
 */
export class Operators1764700000000 implements MigrationInterface {
  name = 'Operators1764700000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`CREATE TABLE operators (
      id uuid PRIMARY KEY,
      name text NOT NULL UNIQUE CHECK (name ~ '^[A-Za-z0-9][A-Za-z0-9._@-]{0,63}$'),
      role text NOT NULL CHECK (role IN ('viewer', 'operator', 'admin')),
      token_hash bytea NOT NULL UNIQUE CHECK (octet_length(token_hash) = 32),
      created_at timestamptz NOT NULL DEFAULT now(),
      created_by uuid REFERENCES operators (id),
      revoked_at timestamptz,
      revoked_by uuid REFERENCES operators (id),
      last_used_at timestamptz,
      CHECK ((revoked_at IS NULL) = (revoked_by IS NULL))
    )`);
    await q.query(`CREATE TABLE audit_events (
      id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
      at timestamptz NOT NULL DEFAULT clock_timestamp(),
      operator_id uuid REFERENCES operators (id),
      operator_name text,
      action text NOT NULL,
      target text,
      origin text NOT NULL,
      outcome text NOT NULL CHECK (outcome IN ('attempted', 'ok', 'refused', 'failed')),
      error_class text,
      attempt_id bigint REFERENCES audit_events (id),
      detail jsonb NOT NULL DEFAULT '{}'::jsonb,
      CHECK ((outcome = 'failed') = (error_class IS NOT NULL)),
      -- An outcome points at its attempt; a refusal before any attempt (bad token, wrong role) stands alone.
      CHECK (CASE outcome WHEN 'attempted' THEN attempt_id IS NULL WHEN 'refused' THEN true ELSE attempt_id IS NOT NULL END)
    )`);
    await q.query(`CREATE INDEX audit_events_at ON audit_events (at DESC, id DESC)`);
    await q.query(`CREATE INDEX audit_events_operator ON audit_events (operator_name, at DESC)`);
    await q.query(`CREATE INDEX audit_events_action ON audit_events (action, at DESC)`);
    await q.query(`CREATE FUNCTION audit_events_append_only() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN
        RAISE EXCEPTION 'audit_events is append-only: % refused', TG_OP USING ERRCODE = 'insufficient_privilege';
      END
    $$`);
    await q.query(
      `CREATE TRIGGER audit_events_no_change BEFORE UPDATE OR DELETE ON audit_events FOR EACH ROW EXECUTE FUNCTION audit_events_append_only()`,
    );
    await q.query(
      `CREATE TRIGGER audit_events_no_truncate BEFORE TRUNCATE ON audit_events FOR EACH STATEMENT EXECUTE FUNCTION audit_events_append_only()`,
    );
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP TABLE audit_events`);
    await q.query(`DROP FUNCTION audit_events_append_only()`);
    await q.query(`DROP TABLE operators`);
  }
}
