import { randomUUID } from 'node:crypto';
import { DataSource } from 'typeorm';
import { columns, distinctGroups, inKeyOrder, runDistinctGroups } from '../batching';
import type { Created, DeliveryRow, FinishedAttempt, NewDeliveryClaim } from './delivery-rows';

// The two writes of every delivery, each one statement for a batch of callers (DeliveriesRepository
// batches them with statementBatcher): creating deliveries, and recording attempts.

/**
 * One statement for many new deliveries. The final SELECT reads the snapshot taken before the
 * insert, so it finds exactly the deliveries that existed already. An event twice in one batch
 * is inserted once; its second caller gets the row as not created (it must not attempt too).
 * A delivery inserted by a concurrent statement after the snapshot is in neither part: that
 * caller fails and its event job runs again, and then finds it.
 */
export async function createDeliveries(db: DataSource, items: readonly NewDeliveryClaim[]): Promise<(Created | Error)[]> {
  const key = (d: { transactionId: string; statusVersion: number; event: string }) => `${d.transactionId}|${d.statusVersion}|${d.event}`;
  const [unique] = distinctGroups(items, key);
  const firsts = new Set(unique);
  const rows: (DeliveryRow & { created: boolean })[] = await db.query(
    `WITH input AS (
       SELECT * FROM unnest($1::uuid[], $2::uuid[], $3::uuid[], $4::int[], $5::text[], $6::text[], $7::text[], $8::text[], $9::text[], $10::int[])
         AS t (id, merchant_id, transaction_id, status_version, event, url, origin, body, status, attempts)),
     held AS (
       SELECT merchant_id, origin FROM listeners WHERE state = 'disabled' AND (merchant_id, origin) IN (SELECT merchant_id, origin FROM input)),
     created AS (
       INSERT INTO deliveries (id, merchant_id, transaction_id, status_version, event, url, origin, body, status, attempts)
       SELECT i.id, i.merchant_id, i.transaction_id, i.status_version, i.event, i.url, i.origin, i.body,
         CASE WHEN h.origin IS NULL THEN i.status ELSE 'held' END, CASE WHEN h.origin IS NULL THEN i.attempts ELSE 0 END
       FROM input i LEFT JOIN held h USING (merchant_id, origin)
       ON CONFLICT (transaction_id, status_version, event) DO NOTHING RETURNING *)
     SELECT *, true AS created FROM created UNION ALL
     SELECT d.*, false AS created FROM deliveries d JOIN input i USING (transaction_id, status_version, event)`,
    columns(
      unique,
      () => randomUUID(),
      (d) => d.merchantId,
      (d) => d.transactionId,
      (d) => d.statusVersion,
      (d) => d.event,
      (d) => d.url,
      (d) => d.origin,
      (d) => d.body,
      (d) => (d.claim ? 'sending' : 'pending'),
      (d) => (d.claim ? 1 : 0),
    ),
  );
  const byKey = new Map(
    rows.map(({ created, ...row }) => [
      key({ transactionId: row.transaction_id, statusVersion: row.status_version, event: row.event }),
      { row, created },
    ]),
  );
  return items.map((d) => {
    const hit = byKey.get(key(d));
    if (!hit) return new Error(`delivery of ${d.transactionId} v${d.statusVersion} was created concurrently; retry`);
    if (!firsts.has(d)) return { row: hit.row, created: false };
    return hit;
  });
}

/**
 * Records many attempts and their deliveries' new states, in one statement. Two attempts of
 * one delivery in a batch (a re-delivered event raced the first) are recorded one after the
 * other, never in one UPDATE, where Postgres would apply an arbitrary one of them.
 */
export function recordAttempts(db: DataSource, items: readonly FinishedAttempt[]): Promise<(void | Error)[]> {
  return runDistinctGroups(
    items,
    (f) => f.id,
    async (group) => {
      await recordDistinctAttempts(
        db,
        inKeyOrder(group, (f) => f.id),
      );
      return () => undefined;
    },
  );
}

async function recordDistinctAttempts(db: DataSource, items: readonly FinishedAttempt[]): Promise<void> {
  await db.query(
    `WITH input AS (
       SELECT * FROM unnest($1::uuid[], $2::int[], $3::timestamptz[], $4::int[], $5::int[], $6::text[], $7::text[], $8::text[], $9::timestamptz[], $10::text[], $11::text[])
         AS t (id, attempt, started_at, duration_ms, http_status, error_class, response_body, status, next_attempt_at, error, trace_id)),
     attempt AS (
       INSERT INTO delivery_attempts (delivery_id, attempt, started_at, duration_ms, http_status, error_class, response_body, trace_id)
       SELECT id, attempt, started_at, duration_ms, http_status, error_class, response_body, trace_id FROM input)
     UPDATE deliveries d SET status = i.status, next_attempt_at = i.next_attempt_at, last_http_status = i.http_status, last_error = i.error, updated_at = now(),
       succeeded_at = CASE WHEN i.status = 'succeeded' THEN now() ELSE d.succeeded_at END
     FROM input i WHERE d.id = i.id`,
    columns(
      items,
      (f) => f.id,
      (f) => f.attempt,
      (f) => f.a.startedAt,
      (f) => f.a.durationMs,
      (f) => f.a.httpStatus ?? null,
      (f) => f.a.errorClass ?? null,
      (f) => f.a.responseBody ?? null,
      (f) => f.next.status,
      (f) => f.next.nextAttemptAt ?? null,
      (f) => f.next.error ?? null,
      (f) => f.a.traceId ?? null,
    ),
  );
}
