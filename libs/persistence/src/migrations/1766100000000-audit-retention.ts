import { MigrationInterface, QueryRunner } from 'typeorm';
import { applyRoleGrants } from '../roles';
import { buildIndexConcurrently, inTransaction } from './concurrent-index';
import { RETENTION_LOCK } from './1765700000000-retention';

/** The least age prune_audit_events() keeps, whatever its caller asks (RETENTION_AUDIT cannot go lower either). */
export const AUDIT_MIN_DAYS = 30;

/** The trigger function as the operators migration made it: every UPDATE, DELETE and TRUNCATE refused. */
const APPEND_ONLY = `CREATE OR REPLACE FUNCTION audit_events_append_only() RETURNS trigger LANGUAGE plpgsql AS $$
  BEGIN
    RAISE EXCEPTION 'audit_events is append-only: % refused', TG_OP USING ERRCODE = 'insufficient_privilege';
  END
$$`;

/**
 * A retention rule for the audit trail (issue 32 finding 4; docs/operations/retention.md),
 * without giving any role DELETE on it.
 *
 * prune_audit_events(cutoff, max_rows) deletes up to max_rows events older than cutoff, oldest
 * first, and returns how many (-1 when another pass holds the table's retention lock). It runs as
 * the table's owner (SECURITY DEFINER, fixed search_path); EXECUTE goes to the roles of
 * FUNCTION_GRANTS (roles.ts: the api's pass and the operator's retention:run), nobody else. It
 * refuses a cutoff younger than AUDIT_MIN_DAYS, so a role that may call it can never empty the
 * recent trail. An attempt whose outcome is younger than the cutoff is kept with it (the outcome
 * points at it); an attempt that goes takes its outcomes with it.
 *
 * The append-only trigger still refuses every UPDATE, TRUNCATE and DELETE, except a DELETE run by
 * the owner inside this function, of an event older than the cutoff the function set for its own
 * transaction (gateway.audit_prune_before). No role has DELETE on the table: the function is the
 * only way in.
 *
 * Outcomes are found by attempt_id (the foreign key's own checks need it too): an index on it,
 * built CONCURRENTLY, so the migration runs outside a transaction.
 */
export class AuditRetention1766100000000 implements MigrationInterface {
  name = 'AuditRetention1766100000000';
  transaction = false;

  async up(q: QueryRunner): Promise<void> {
    await buildIndexConcurrently(q, 'audit_events_attempt', 'audit_events (attempt_id) WHERE attempt_id IS NOT NULL');
    await inTransaction(q, async () => {
      await q.query(`CREATE OR REPLACE FUNCTION audit_events_append_only() RETURNS trigger LANGUAGE plpgsql AS $$
        BEGIN
          IF TG_OP = 'DELETE'
             AND OLD.at < nullif(current_setting('gateway.audit_prune_before', true), '')::timestamptz
             AND current_user = (SELECT pg_get_userbyid(relowner) FROM pg_class WHERE oid = TG_RELID) THEN
            RETURN OLD;
          END IF;
          RAISE EXCEPTION 'audit_events is append-only: % refused', TG_OP USING ERRCODE = 'insufficient_privilege';
        END
      $$`);
      await q.query(`CREATE FUNCTION prune_audit_events(cutoff timestamptz, max_rows integer) RETURNS integer
        LANGUAGE plpgsql SECURITY DEFINER SET search_path = public, pg_temp
        AS $$
        DECLARE
          n integer;
        BEGIN
          IF cutoff IS NULL OR cutoff > now() - interval '${AUDIT_MIN_DAYS} days' THEN
            RAISE EXCEPTION 'prune_audit_events keeps the last ${AUDIT_MIN_DAYS} days of the audit trail (cutoff %)', cutoff
              USING ERRCODE = 'invalid_parameter_value';
          END IF;
          IF max_rows IS NULL OR max_rows < 1 OR max_rows > 50000 THEN
            RAISE EXCEPTION 'prune_audit_events deletes 1 to 50000 rows a call (max_rows %)', max_rows USING ERRCODE = 'invalid_parameter_value';
          END IF;
          IF NOT pg_try_advisory_xact_lock(${RETENTION_LOCK}, hashtext('audit_events')) THEN
            RETURN -1;
          END IF;
          PERFORM set_config('gateway.audit_prune_before', cutoff::text, true);
          WITH batch AS (
            SELECT a.id FROM audit_events a
            WHERE a.at < cutoff AND NOT EXISTS (SELECT 1 FROM audit_events o WHERE o.attempt_id = a.id AND o.at >= cutoff)
            ORDER BY a.at, a.id
            LIMIT max_rows
          ), gone AS (
            DELETE FROM audit_events
            WHERE id IN (SELECT id FROM batch UNION SELECT o.id FROM audit_events o WHERE o.attempt_id IN (SELECT id FROM batch))
            RETURNING 1
          )
          SELECT count(*)::integer INTO n FROM gone;
          PERFORM set_config('gateway.audit_prune_before', '', true);
          RETURN n;
        END $$`);
      // EXECUTE only as FUNCTION_GRANTS says (PUBLIC's default taken away there).
      await applyRoleGrants(q);
    });
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP FUNCTION IF EXISTS prune_audit_events(timestamptz, integer)`);
    await q.query(APPEND_ONLY);
    await q.query(`DROP INDEX IF EXISTS audit_events_attempt`);
    await applyRoleGrants(q);
  }
}
