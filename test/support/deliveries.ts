import type { Client } from 'pg';

/** A notifier that delivers to listeners on this machine, fast: a compressed schedule and a short timeout. */
export const LOCAL_LISTENER_ENV: Readonly<Record<string, string>> = {
  WEBHOOK_SCHEDULE_SCALE: '0.0001',
  WEBHOOK_ALLOW_NETWORKS: '127.0.0.1/32',
  WEBHOOK_TIMEOUT_MS: '3000',
};

/**
 * Inserts `n` deliveries of one merchant straight into Postgres (as the notifier would have left
 * them: `status`, 10 attempts), created `ageS` seconds ago, 1 ms apart, to `url` (whose listener
 * is `origin`). Answers their ids in creation order. For recoveries' tests: hundreds of failed
 * deliveries without hundreds of sales.
 */
export async function insertDeliveries(
  db: Client,
  d: { merchantId: string; url: string; origin: string; n: number; status?: string; ageS?: number },
): Promise<string[]> {
  const rows: { id: string }[] = (
    await db.query(
      `INSERT INTO deliveries (id, merchant_id, transaction_id, status_version, event, url, origin, body, status, attempts, created_at, updated_at)
       SELECT gen_random_uuid(), $1, gen_random_uuid(), 2, 'transaction.status_changed', $2, $3, '{"n":' || g || '}', $4, 10,
         now() - make_interval(secs => $5) + g * interval '1 ms', now() - make_interval(secs => $5) + g * interval '1 ms'
       FROM generate_series(1, $6::int) g ORDER BY g RETURNING id`,
      [d.merchantId, d.url, d.origin, d.status ?? 'failed', d.ageS ?? 60, d.n],
    )
  ).rows;
  return rows.map((r) => r.id);
}
