import { MigrationInterface, QueryRunner } from 'typeorm';
import { applyRoleGrants } from '../roles';
import { buildIndexConcurrently, inTransaction } from './concurrent-index';

/** The host of a listener URL, as the console's host filter computes it (delivery-console.repository.ts HOST_OF). */
const HOST = `lower(substring(url from '^[A-Za-z][A-Za-z0-9+.-]*://(?:[^/@]*@)?(\\[[^]]*\\]|[^/:?#]*)'))`;

const SPANS = ['hour', 'minute'] as const;

/**
 * Failed attempts per listener (merchant, host) per hour or minute: in the trigger, of the
 * statement's new attempts, added to what is there; at migration, of the last 25 hours' attempts.
 */
function failuresBy(span: (typeof SPANS)[number], attempts: string, add: boolean): string {
  return `INSERT INTO listener_failure_${span}s (bucket, merchant_id, host, failed, last_failed_at)
    SELECT date_trunc('${span}', a.started_at, 'UTC'), d.merchant_id, ${HOST.replace('url', 'd.url')}, count(*), max(a.started_at)
    FROM ${attempts} a JOIN deliveries d ON d.id = a.delivery_id
    WHERE a.error_class IS NOT NULL ${add ? '' : `AND a.started_at >= date_trunc('hour', now() - interval '25 hours', 'UTC')`}
    GROUP BY 1, 2, 3 ORDER BY 1, 2, 3
    ${
      add
        ? `ON CONFLICT (bucket, merchant_id, host) DO UPDATE SET failed = listener_failure_${span}s.failed + excluded.failed,
      last_failed_at = greatest(listener_failure_${span}s.last_failed_at, excluded.last_failed_at)`
        : ''
    };`;
}

/**
 * The console on real volumes (issue 16: 1 million deliveries, 5 million attempts, every page
 * under 100 ms at the p99). See docs/decisions/0006-console-on-real-volumes.md.
 *
 * Indexes for the deliveries list, each ending in (created_at, id), the list's keyset order, so a
 * page is an index range read backwards: unfiltered, by merchant, by state (these two replace
 * (merchant_id, created_at) and (status, created_at), which they cover), by listener host (the
 * console's own expression); and the failed attempts by start time. Built CONCURRENTLY, so a
 * deployment keeps writing deliveries meanwhile: the migration runs outside a transaction
 * (`transaction = false`), and an index a failed run left INVALID is dropped and built again.
 *
 * The overview's counts, kept by statement-level triggers in the transaction of the change
 * (every writer, the notifier's batches, replays and releases alike), so they are exact:
 * - delivery_state_counts: deliveries per state (a count(*) over a million rows took 200-400 ms);
 * - delivery_minutes: attempts per minute, succeeded and failed (the chart's 24 h of attempts);
 * - listener_failure_hours and listener_failure_minutes: failed attempts per listener (merchant,
 *   host) per hour and per minute (the failing-listeners table sums 24 h of hours, the minutes of the first hour, and reads the
 *   attempts of the first minute itself, so the 24 h window is exactly as before).
 * Each trigger upserts its rows in key order, so two statements never wait on each other in a
 * circle; the attempts' trigger first deletes what fell out of the 24 h (before it locks a count),
 * so the tables stay small. The functions run as their owner (SECURITY DEFINER, fixed search_path): the apps that
 * write deliveries and attempts need no grant on the counts; the api reads them.
 * The counts start from the rows already there, taken under a write lock (a few seconds on a
 * million deliveries), so no change falls between the count and the trigger.
 */
export class ConsoleVolume1765500000000 implements MigrationInterface {
  name = 'ConsoleVolume1765500000000';
  transaction = false;

  async up(q: QueryRunner): Promise<void> {
    const build = (name: string, definition: string) => buildIndexConcurrently(q, name, definition);
    await build('deliveries_created', `deliveries (created_at, id)`);
    await build('deliveries_merchant_created', `deliveries (merchant_id, created_at, id)`);
    await q.query(`DROP INDEX CONCURRENTLY IF EXISTS deliveries_merchant`);
    await build('deliveries_status_created', `deliveries (status, created_at, id)`);
    await q.query(`DROP INDEX CONCURRENTLY IF EXISTS deliveries_status`);
    await build('deliveries_host', `deliveries ((${HOST}), created_at, id)`);
    await build('delivery_attempts_failed', `delivery_attempts (started_at) WHERE error_class IS NOT NULL`);

    await inTransaction(q, async () => {
      await q.query(`CREATE TABLE delivery_state_counts (status text PRIMARY KEY, n bigint NOT NULL)`);
      await q.query(`CREATE TABLE delivery_minutes (
        minute timestamptz PRIMARY KEY,
        succeeded integer NOT NULL,
        failed integer NOT NULL
      )`);
      // Per hour and per minute, in tables of their own: the overview reads 24 hours of the one and an hour of the other.
      for (const span of SPANS)
        await q.query(`CREATE TABLE listener_failure_${span}s (
          bucket timestamptz NOT NULL,
          merchant_id uuid NOT NULL,
          host text NOT NULL,
          failed integer NOT NULL,
          last_failed_at timestamptz NOT NULL,
          PRIMARY KEY (bucket, merchant_id, host)
        )`);
      await q.query(`CREATE FUNCTION count_delivery_states() RETURNS trigger LANGUAGE plpgsql SECURITY DEFINER SET search_path = public, pg_temp AS $$
        BEGIN
          IF TG_OP = 'INSERT' THEN
            INSERT INTO delivery_state_counts (status, n) SELECT status, count(*) FROM new_rows GROUP BY status ORDER BY status
            ON CONFLICT (status) DO UPDATE SET n = delivery_state_counts.n + excluded.n;
          ELSIF TG_OP = 'UPDATE' THEN
            INSERT INTO delivery_state_counts (status, n)
            SELECT status, sum(d) FROM (SELECT status, 1 AS d FROM new_rows UNION ALL SELECT status, -1 FROM old_rows) c
            GROUP BY status HAVING sum(d) <> 0 ORDER BY status
            ON CONFLICT (status) DO UPDATE SET n = delivery_state_counts.n + excluded.n;
          ELSE
            INSERT INTO delivery_state_counts (status, n) SELECT status, -count(*) FROM old_rows GROUP BY status ORDER BY status
            ON CONFLICT (status) DO UPDATE SET n = delivery_state_counts.n + excluded.n;
          END IF;
          RETURN NULL;
        END $$`);
      await q.query(`CREATE FUNCTION count_delivery_attempts() RETURNS trigger LANGUAGE plpgsql SECURITY DEFINER SET search_path = public, pg_temp AS $$
        BEGIN
          -- Kept small: the overview reads the last 24 hours only (these deletes find a row or two a minute).
          DELETE FROM delivery_minutes WHERE minute < now() - interval '25 hours';
          DELETE FROM listener_failure_minutes WHERE bucket < now() - interval '25 hours';
          DELETE FROM listener_failure_hours WHERE bucket < now() - interval '26 hours';
          INSERT INTO delivery_minutes (minute, succeeded, failed)
          SELECT date_trunc('minute', started_at, 'UTC'), count(*) FILTER (WHERE error_class IS NULL), count(*) FILTER (WHERE error_class IS NOT NULL)
          FROM new_rows GROUP BY 1 ORDER BY 1
          ON CONFLICT (minute) DO UPDATE SET succeeded = delivery_minutes.succeeded + excluded.succeeded,
            failed = delivery_minutes.failed + excluded.failed;
          ${SPANS.map((span) => failuresBy(span, 'new_rows', true)).join('\n')}
          RETURN NULL;
        END $$`);
      await q.query(`LOCK TABLE deliveries, delivery_attempts IN SHARE ROW EXCLUSIVE MODE`);
      for (const [event, rows] of [
        ['INSERT', 'NEW TABLE AS new_rows'],
        ['UPDATE', 'OLD TABLE AS old_rows NEW TABLE AS new_rows'],
        ['DELETE', 'OLD TABLE AS old_rows'],
      ])
        await q.query(`CREATE TRIGGER deliveries_count_${event.toLowerCase()} AFTER ${event} ON deliveries
          REFERENCING ${rows} FOR EACH STATEMENT EXECUTE FUNCTION count_delivery_states()`);
      await q.query(`CREATE TRIGGER delivery_attempts_count AFTER INSERT ON delivery_attempts
        REFERENCING NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION count_delivery_attempts()`);
      await q.query(`INSERT INTO delivery_state_counts (status, n) SELECT status, count(*) FROM deliveries GROUP BY status`);
      // What the overview reads: the last 25 hours (older minutes and hours are never asked for).
      await q.query(`INSERT INTO delivery_minutes (minute, succeeded, failed)
        SELECT date_trunc('minute', started_at, 'UTC'), count(*) FILTER (WHERE error_class IS NULL), count(*) FILTER (WHERE error_class IS NOT NULL)
        FROM delivery_attempts WHERE started_at > now() - interval '25 hours' GROUP BY 1`);
      for (const span of SPANS) await q.query(failuresBy(span, 'delivery_attempts', false));
      await applyRoleGrants(q);
    });
  }

  /** TypeORM runs a revert in a transaction whatever `transaction` says: plain index statements here. */
  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP TRIGGER IF EXISTS delivery_attempts_count ON delivery_attempts`);
    for (const event of ['insert', 'update', 'delete']) await q.query(`DROP TRIGGER IF EXISTS deliveries_count_${event} ON deliveries`);
    await q.query(`DROP FUNCTION IF EXISTS count_delivery_attempts()`);
    await q.query(`DROP FUNCTION IF EXISTS count_delivery_states()`);
    await q.query(`DROP TABLE IF EXISTS listener_failure_hours, listener_failure_minutes, delivery_minutes, delivery_state_counts`);
    await q.query(`CREATE INDEX IF NOT EXISTS deliveries_status ON deliveries (status, created_at)`);
    await q.query(`CREATE INDEX IF NOT EXISTS deliveries_merchant ON deliveries (merchant_id, created_at)`);
    for (const name of [
      'delivery_attempts_failed',
      'deliveries_host',
      'deliveries_status_created',
      'deliveries_merchant_created',
      'deliveries_created',
    ])
      await q.query(`DROP INDEX IF EXISTS ${name}`);
  }
}
