import { MigrationInterface, QueryRunner } from 'typeorm';
import { applyRoleGrants, APP_ROLES } from '../roles';
import { buildIndexConcurrently, inTransaction } from './concurrent-index';

/** The advisory lock namespace of the retention passes (the second key is hashtext of the table). */
export const RETENTION_LOCK = 1765700000;

/** Days of delivery_attempts partitions the migration makes ahead (the notifier keeps a week ahead after). */
const AHEAD_DAYS = 7;

/**
 * A partition's bounds from its partition expression (the function runs with TimeZone UTC, so the
 * text is UTC): [1] the lower bound (NULL for MINVALUE), [2] the upper one.
 */
const BOUNDS = `regexp_match(pg_get_expr(c.relpartbound, c.oid), 'FROM \\((?:''([^'']+)''|MINVALUE)\\) TO \\(''([^'']+)''\\)')`;

/** delivery_attempts as the webhooks migration made it, with `key` as its primary key, then `partitioning`. */
const attemptsTable = (key: string, partitioning: string): string => `CREATE TABLE delivery_attempts (
  id bigint NOT NULL DEFAULT nextval('delivery_attempts_id_seq'),
  delivery_id uuid NOT NULL REFERENCES deliveries (id),
  attempt integer NOT NULL,
  started_at timestamptz NOT NULL,
  duration_ms integer NOT NULL,
  http_status integer,
  error_class text CONSTRAINT delivery_attempts_error_class_check
    CHECK (error_class IN ('timeout', 'dns', 'connect', 'tls', 'ssrf_blocked', 'http_status')),
  response_body text,
  ${key}
) ${partitioning}`;

/**
 * Bounded data growth (docs/operations/retention.md): each table that grows with traffic gets
 * what its retention rule reads, and delivery_attempts, the largest, is partitioned by day so old
 * attempts go with a DROP of their day instead of a delete.
 *
 * Indexes on the age each rule deletes by (built CONCURRENTLY: writers go on meanwhile, the
 * migration runs outside a transaction): published outbox rows by publication time, sandbox calls
 * by time, finished deliveries by last change, portal links by whichever of expiry and revocation
 * came first. (idempotency_keys and console_sessions have theirs already.)
 *
 * delivery_attempts becomes a table partitioned by range of started_at (UTC days). The existing
 * table is kept whole, as the partition delivery_attempts_legacy for everything before the first
 * day partition, and attached without a scan: its bound is a CHECK validated beforehand (which
 * lets writes go on), and its primary key becomes (id, started_at), as a partitioned table's key
 * must hold the partition column (the unique index is built CONCURRENTLY first). The switch itself
 * (rename, new parent, attach, the day partitions, the overview's trigger) is catalog work under
 * one short lock. Row ids keep coming from the same sequence; the console's indexes are the
 * parent's, so every partition has them.
 *
 * delivery_attempts_partitions(keep_from, create_until, dry) drops every partition wholly before
 * keep_from and creates the day partitions missing up to create_until; the notifier calls it
 * (EXECUTE granted to it and to the operator), as the tables' owner (SECURITY DEFINER, fixed
 * search_path): the app role gets no DDL. It waits at most 1 s for a lock (a partition it cannot
 * lock is reported busy, tried again next pass) and runs on one caller at a time
 * (pg_try_advisory_xact_lock: another caller gets no rows).
 */
export class Retention1765700000000 implements MigrationInterface {
  name = 'Retention1765700000000';
  transaction = false;

  async up(q: QueryRunner): Promise<void> {
    await buildIndexConcurrently(q, 'outbox_published', `outbox (published_at) WHERE published_at IS NOT NULL`);
    await buildIndexConcurrently(q, 'sandbox_calls_created', `sandbox_calls (created_at)`);
    await buildIndexConcurrently(q, 'deliveries_finished', `deliveries (updated_at) WHERE status IN ('succeeded', 'failed', 'blocked')`);
    await buildIndexConcurrently(q, 'portal_links_over', `portal_links ((LEAST(revoked_at, expires_at)))`);

    // The first day partition starts the day after tomorrow (UTC): every attempt written before
    // the switch, and until then, is in the legacy partition.
    const [{ cut }]: { cut: string }[] = await q.query(
      `SELECT to_char(date_trunc('day', now() AT TIME ZONE 'UTC') + interval '2 days', 'YYYY-MM-DD"T00:00:00Z"') AS cut`,
    );
    await buildIndexConcurrently(q, 'delivery_attempts_id_started', `delivery_attempts (id, started_at)`, true);
    const [bound]: unknown[] = await q.query(`SELECT 1 FROM pg_constraint WHERE conname = 'delivery_attempts_legacy_bound'`);
    if (bound) await q.query(`ALTER TABLE delivery_attempts DROP CONSTRAINT delivery_attempts_legacy_bound`);
    await q.query(`ALTER TABLE delivery_attempts ADD CONSTRAINT delivery_attempts_legacy_bound CHECK (started_at < '${cut}') NOT VALID`);
    // Reads the table once, under a lock that lets writers go on.
    await q.query(`ALTER TABLE delivery_attempts VALIDATE CONSTRAINT delivery_attempts_legacy_bound`);

    await inTransaction(q, async () => {
      await q.query(`LOCK TABLE deliveries, delivery_attempts IN SHARE ROW EXCLUSIVE MODE`);
      await q.query(`ALTER TABLE delivery_attempts RENAME TO delivery_attempts_legacy`);
      await q.query(`ALTER INDEX delivery_attempts_delivery RENAME TO delivery_attempts_legacy_delivery`);
      await q.query(`ALTER INDEX delivery_attempts_failed RENAME TO delivery_attempts_legacy_failed`);
      await q.query(`DROP TRIGGER delivery_attempts_count ON delivery_attempts_legacy`);
      // Attaching needs the parent's CHECK by name: the error class check, whatever a past run named it.
      const [check]: { name: string }[] = await q.query(
        `SELECT conname AS name FROM pg_constraint WHERE conrelid = 'delivery_attempts_legacy'::regclass AND contype = 'c'
           AND pg_get_constraintdef(oid) LIKE '%error_class%'`,
      );
      if (check.name !== 'delivery_attempts_error_class_check')
        await q.query(`ALTER TABLE delivery_attempts_legacy RENAME CONSTRAINT ${check.name} TO delivery_attempts_error_class_check`);
      await q.query(`ALTER TABLE delivery_attempts_legacy DROP CONSTRAINT delivery_attempts_pkey,
        ADD CONSTRAINT delivery_attempts_legacy_pkey PRIMARY KEY USING INDEX delivery_attempts_id_started`);
      await q.query(attemptsTable('PRIMARY KEY (id, started_at)', 'PARTITION BY RANGE (started_at)'));
      await q.query(`ALTER SEQUENCE delivery_attempts_id_seq OWNED BY delivery_attempts.id`);
      await q.query(`CREATE INDEX delivery_attempts_delivery ON delivery_attempts (delivery_id, id)`);
      await q.query(`CREATE INDEX delivery_attempts_failed ON delivery_attempts (started_at) WHERE error_class IS NOT NULL`);
      await q.query(`ALTER TABLE delivery_attempts ATTACH PARTITION delivery_attempts_legacy FOR VALUES FROM (MINVALUE) TO ('${cut}')`);
      await q.query(`ALTER TABLE delivery_attempts_legacy DROP CONSTRAINT delivery_attempts_legacy_bound`);
      await q.query(`CREATE TRIGGER delivery_attempts_count AFTER INSERT ON delivery_attempts
        REFERENCING NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION count_delivery_attempts()`);
      await q.query(`CREATE FUNCTION delivery_attempts_partitions(keep_from timestamptz, create_until timestamptz, dry boolean)
        RETURNS TABLE (partition text, action text, row_count bigint)
        LANGUAGE plpgsql SECURITY DEFINER
        SET search_path = public, pg_temp SET "TimeZone" = 'UTC' SET lock_timeout = '1s'
        AS $$
        DECLARE
          p record;
          day timestamptz;
        BEGIN
          IF NOT pg_try_advisory_xact_lock(${RETENTION_LOCK}, hashtext('delivery_attempts')) THEN
            RETURN;
          END IF;
          FOR p IN
            SELECT c.relname, c.reltuples, b[2]::timestamptz AS upper
            FROM pg_inherits i JOIN pg_class c ON c.oid = i.inhrelid, LATERAL ${BOUNDS} b
            WHERE i.inhparent = 'public.delivery_attempts'::regclass AND b[2]::timestamptz <= keep_from
            ORDER BY upper
          LOOP
            partition := p.relname;
            action := 'drop';
            -- The partition's statistics (autovacuum keeps them); a partition never analyzed is counted.
            IF p.reltuples >= 0 THEN
              row_count := p.reltuples::bigint;
            ELSE
              EXECUTE format('SELECT count(*) FROM %I', p.relname) INTO row_count;
            END IF;
            IF NOT dry THEN
              BEGIN
                EXECUTE format('DROP TABLE %I', p.relname);
              EXCEPTION WHEN lock_not_available THEN
                action := 'busy';
              END;
            END IF;
            RETURN NEXT;
          END LOOP;
          -- From today (never a day this call just found past keep_from).
          day := date_trunc('day', greatest(now(), keep_from));
          WHILE day < create_until LOOP
            IF NOT EXISTS (
              SELECT 1 FROM pg_inherits i JOIN pg_class c ON c.oid = i.inhrelid, LATERAL ${BOUNDS} b
              WHERE i.inhparent = 'public.delivery_attempts'::regclass
                AND coalesce(b[1]::timestamptz, '-infinity') < day + interval '1 day' AND b[2]::timestamptz > day
            ) THEN
              partition := 'delivery_attempts_p' || to_char(day, 'YYYYMMDD');
              action := 'create';
              row_count := 0;
              IF NOT dry THEN
                BEGIN
                  EXECUTE format('CREATE TABLE %I PARTITION OF delivery_attempts FOR VALUES FROM (%L) TO (%L)',
                    partition, day, day + interval '1 day');
                EXCEPTION WHEN lock_not_available THEN
                  action := 'busy';
                END;
              END IF;
              RETURN NEXT;
            END IF;
            day := day + interval '1 day';
          END LOOP;
        END $$`);
      await q.query(`REVOKE ALL ON FUNCTION delivery_attempts_partitions(timestamptz, timestamptz, boolean) FROM PUBLIC`);
      await q.query(
        `GRANT EXECUTE ON FUNCTION delivery_attempts_partitions(timestamptz, timestamptz, boolean) TO ${APP_ROLES.notifier}, ${APP_ROLES.cli}`,
      );
      await q.query(`SELECT * FROM delivery_attempts_partitions('-infinity', now() + interval '${AHEAD_DAYS} days', false)`);
      await applyRoleGrants(q);
    });
  }

  /** Back to one table: the partitions' rows moved into a plain table again (TypeORM runs a revert in a transaction). */
  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP FUNCTION IF EXISTS delivery_attempts_partitions(timestamptz, timestamptz, boolean)`);
    await q.query(`ALTER TABLE delivery_attempts RENAME TO delivery_attempts_parted`);
    await q.query(`ALTER INDEX delivery_attempts_delivery RENAME TO delivery_attempts_parted_delivery`);
    await q.query(`ALTER INDEX delivery_attempts_failed RENAME TO delivery_attempts_parted_failed`);
    await q.query(`ALTER TABLE delivery_attempts_parted RENAME CONSTRAINT delivery_attempts_pkey TO delivery_attempts_parted_pkey`);
    await q.query(attemptsTable('PRIMARY KEY (id)', ''));
    await q.query(`INSERT INTO delivery_attempts SELECT id, delivery_id, attempt, started_at, duration_ms, http_status, error_class, response_body
      FROM delivery_attempts_parted`);
    await q.query(`ALTER SEQUENCE delivery_attempts_id_seq OWNED BY delivery_attempts.id`);
    await q.query(`DROP TABLE delivery_attempts_parted`);
    await q.query(`CREATE INDEX delivery_attempts_delivery ON delivery_attempts (delivery_id, id)`);
    await q.query(`CREATE INDEX delivery_attempts_failed ON delivery_attempts (started_at) WHERE error_class IS NOT NULL`);
    await q.query(`CREATE TRIGGER delivery_attempts_count AFTER INSERT ON delivery_attempts
      REFERENCING NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION count_delivery_attempts()`);
    for (const name of ['portal_links_over', 'deliveries_finished', 'sandbox_calls_created', 'outbox_published'])
      await q.query(`DROP INDEX IF EXISTS ${name}`);
    await applyRoleGrants(q);
  }
}
