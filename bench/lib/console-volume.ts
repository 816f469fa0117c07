import { Client } from 'pg';
import { luhnCheckDigit } from '@app/persistence/merchants/merchant-public-id';

export interface VolumeShape {
  deliveries: number;
  merchants: number;
  /** Share of the deliveries created in the last 24 h (the rest over the 29 days before). */
  recentShare: number;
}

/** What the scenarios need to know of the seeded volume: merchants, hosts and deliveries to ask for. */
export interface SeededVolume {
  deliveries: number;
  attempts: number;
  seconds: number;
  bigMerchant: string;
  smallMerchant: string;
  host: string;
  transactionId: string;
  /** A delivery with the most attempts (its detail page lists them all). */
  manyAttempts: { id: string; attempts: number };
  /** The cursor (created_at as Postgres prints it, id) half-way down the unfiltered list. */
  deepCursor: { createdAt: string; id: string };
}

/** A merchant's public id: 10 digits, Luhn-valid, in a range merchant:create is unlikely to draw (it draws again on a clash). */
const publicIdOf = (m: number) => {
  const payload = `2000${String(m).padStart(5, '0')}`;
  return payload + luhnCheckDigit(payload);
};

/**
 * Seeds `shape.deliveries` deliveries with about five attempts each, set-based, as the owner:
 * merchant 0 is big (a third of the traffic), the others skewed from busy to quiet; each merchant
 * has 1 to 4 listener hosts (the big one 20); a listener is healthy (75 %: one attempt, now and then
 * a few), flaky (15 %: several attempts, a third end failed after 25) or down (10 %: failed after
 * 25 attempts, recent ones pending or held). Rows go in in time order, as a live table fills. The
 * plain indexes and the foreign keys are dropped during the load and made again after it (faster
 * than maintaining and checking them row by row; the same definitions), then the tables are vacuumed and analyzed, as autovacuum
 * would have long since done on a live table. Triggers stay on: the overview's counts (migration
 * 1765500000000) are kept by the load itself, as they are by the notifier.
 */
export async function seedConsoleVolume(databaseUrl: string, shape: VolumeShape): Promise<SeededVolume> {
  const started = Date.now();
  const db = new Client({ connectionString: databaseUrl });
  await db.connect();
  try {
    await db.query(`SET maintenance_work_mem = '256MB'`);
    await db.query(`SET work_mem = '64MB'`);
    await db.query(`SET synchronous_commit = off`);
    await db.query(`SELECT setseed(0.16)`);
    await seedMerchants(db, shape.merchants);
    const dropped = await dropPlainIndexesAndKeys(db);
    await seedDeliveries(db, shape);
    await seedAttempts(db);
    for (const i of dropped.plain) await db.query(i.def);
    for (const f of dropped.fks) await db.query(`ALTER TABLE ${f.tbl} ADD CONSTRAINT ${f.name} ${f.def}`);
    await db.query(`VACUUM ANALYZE merchants, deliveries, delivery_attempts`);
    // The load's gigabytes written out now, not by a checkpoint in the middle of the measurements.
    await db.query(`CHECKPOINT`);
    const card = await db.query(`SELECT 1 FROM deliveries WHERE body ~ '[0-9]{13}' LIMIT 1`);
    if (card.rowCount) throw new Error('a seeded body holds a card-like digit run');
    return await describeSeeded(db, shape, started);
  } finally {
    await db.end();
  }
}

/** The merchants (public ids from publicIdOf) and their listener hosts (temp table seed_listeners), each with its health. */
async function seedMerchants(db: Client, merchants: number): Promise<void> {
  const ids = Array.from({ length: merchants }, (_, m) => publicIdOf(m));
  await db.query(
    `INSERT INTO merchants (id, public_id, name, key_hash, webhook_secrets_kek_id, webhook_secret_sealed)
     SELECT gen_random_uuid(), p, 'volume ' || n, '\\x00', 'unused', '\\x00' FROM unnest($1::text[]) WITH ORDINALITY AS t (p, n)`,
    [ids],
  );
  await db.query(`CREATE TEMP TABLE seed_listeners AS
    SELECT m.n - 1 AS m, k, m.id AS merchant_id, 'hooks-' || k || '.shop' || (m.n - 1) || '.example' AS host,
      CASE WHEN (m.n * 7 + k * 13) % 20 < 2 THEN 'down' WHEN (m.n * 7 + k * 13) % 20 < 5 THEN 'flaky' ELSE 'healthy' END AS health
    FROM (SELECT id, row_number() OVER (ORDER BY public_id) AS n FROM merchants WHERE public_id = ANY('{${ids.join(',')}}'::text[])) m,
      generate_series(0, CASE WHEN m.n = 1 THEN 19 ELSE (m.n % 4)::int END) AS k`);
  await db.query(`CREATE INDEX ON seed_listeners (m, k)`);
  await db.query(`ANALYZE seed_listeners`);
}

/** Drops the deliveries' and attempts' plain indexes and foreign keys; returns them to be made again after the load. */
async function dropPlainIndexesAndKeys(
  db: Client,
): Promise<{ plain: { name: string; def: string }[]; fks: { tbl: string; name: string; def: string }[] }> {
  const plain = (
    await db.query<{ name: string; def: string }>(
      `SELECT i.indexname AS name, i.indexdef AS def FROM pg_indexes i
       WHERE i.schemaname = 'public' AND i.tablename IN ('deliveries', 'delivery_attempts')
         AND NOT EXISTS (SELECT 1 FROM pg_constraint c WHERE c.conname = i.indexname)`,
    )
  ).rows;
  for (const i of plain) await db.query(`DROP INDEX ${i.name}`);
  // Foreign keys, checked once at the end (one join) rather than row by row.
  const fks = (
    await db.query<{ tbl: string; name: string; def: string }>(
      `SELECT conrelid::regclass::text AS tbl, conname AS name, pg_get_constraintdef(oid) AS def FROM pg_constraint
       WHERE contype = 'f' AND conrelid IN ('deliveries'::regclass, 'delivery_attempts'::regclass)`,
    )
  ).rows;
  for (const f of fks) await db.query(`ALTER TABLE ${f.tbl} DROP CONSTRAINT ${f.name}`);
  return { plain, fks };
}

/** The deliveries, in time order (see seedConsoleVolume for their mix). */
async function seedDeliveries(db: Client, shape: VolumeShape): Promise<void> {
  // Merchant: 0 for a third, else skewed towards the low numbers; listener: one of the merchant's.
  await db.query(
    `INSERT INTO deliveries (id, merchant_id, transaction_id, status_version, event, url, origin, body, status, attempts,
       next_attempt_at, last_http_status, last_error, created_at, updated_at, succeeded_at)
     SELECT gen_random_uuid(), l.merchant_id, s.tx, 2, 'transaction.status_changed', 'https://' || l.host || '/webhooks/gateway',
       'https://' || l.host || ':443',
       '{"type":"transaction.status_changed","timestamp":"' || to_char(s.created_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"') ||
         '","data":{"transactionId":"' || upper(s.tx::text) || '","operationId":"1","status":"8","message":"APPROVED","errorCode":"",' ||
         '"statusVersion":"2","order":{"reference":"ORDER-' || s.g || '","currency":"986","totalAmount":"' || (1000 + s.g % 90000) ||
         '"},"processor":{"acquirer":"26","nsu":"' || lpad((s.g % 999999)::text, 9, '0') || '","authorizationCode":"' ||
         lpad((s.g % 99999)::text, 6, '0') || '","returnCode":"00","returnMessage":"Approved","numberOfPayments":"1"},' ||
         '"tokenCard":"","split":[]}}',
       s.status, s.n,
       CASE WHEN s.status = 'pending' THEN now() + interval '5 minutes' END,
       CASE s.status WHEN 'succeeded' THEN 200 WHEN 'blocked' THEN NULL ELSE 503 END,
       CASE s.status WHEN 'succeeded' THEN NULL WHEN 'blocked' THEN 'ssrf_blocked' WHEN 'held' THEN NULL ELSE 'http_status: 503' END,
       s.created_at, s.created_at, CASE WHEN s.status = 'succeeded' THEN s.created_at END
     FROM (
       SELECT g, gen_random_uuid() AS tx, created_at, m, k, status,
         CASE status
           WHEN 'blocked' THEN 1 WHEN 'held' THEN 5 + (g % 10) WHEN 'pending' THEN 1 + (g % 20) WHEN 'failed' THEN 25
           ELSE CASE health WHEN 'healthy' THEN CASE WHEN r < 0.9 THEN 1 ELSE 2 + (g % 3) END ELSE 1 + (g % 10) END
         END AS n
       FROM (
         SELECT g, created_at, m, k, r, l.health,
           CASE
             WHEN l.health = 'healthy' THEN CASE WHEN r > 0.998 THEN 'blocked' ELSE 'succeeded' END
             WHEN l.health = 'flaky' THEN CASE WHEN r < 0.7 THEN 'succeeded' WHEN recent AND r < 0.8 THEN 'pending' ELSE 'failed' END
             ELSE CASE WHEN recent AND r < 0.3 THEN 'pending' WHEN recent AND r < 0.5 THEN 'held' ELSE 'failed' END
           END AS status
         FROM (
           SELECT g, r, recent, m, created_at,
             -- the listener: one of the merchant's, by a hash of the delivery's number
             (g::bigint * 7919) % (CASE WHEN m = 0 THEN 20 ELSE (m + 1) % 4 + 1 END) AS k
           FROM (
             SELECT g, random() AS r, recent,
               CASE WHEN random() < 0.33 THEN 0 ELSE 1 + floor(($2 - 1) * random() ^ 2)::int END AS m,
               CASE WHEN recent THEN now() - random() * interval '24 hours'
                 ELSE now() - interval '24 hours' - random() * interval '29 days' END AS created_at
             FROM (SELECT g, random() < $3 AS recent FROM generate_series(1, $1) AS g) x
           ) y
         ) z JOIN seed_listeners l USING (m, k)
       ) w
     ) s JOIN seed_listeners l USING (m, k)
     ORDER BY s.created_at`,
    [shape.deliveries, shape.merchants, shape.recentShare],
  );
}

/** Each delivery's attempts. */
async function seedAttempts(db: Client): Promise<void> {
  // Attempts a minute and a half apart (never in the future); the last one of a succeeded delivery
  // answered 200. Those of deliveries over 25 h old (their last attempt 36 min later at most) lie
  // outside what the overview's counts keep: loaded without the counting trigger, which would
  // only add them up to delete them; the rest with it, as the notifier writes them.
  const attempts = (recent: boolean) =>
    db.query(
      `INSERT INTO delivery_attempts (delivery_id, attempt, started_at, duration_ms, http_status, error_class, response_body)
       SELECT d.id, k, least(d.created_at + (k - 1) * interval '90 seconds', now() - interval '1 second'),
         CASE WHEN ok THEN 40 + (k * 37) % 200 WHEN d.status = 'blocked' THEN 0 ELSE 200 + (k * 911) % 9800 END,
         CASE WHEN ok THEN 200 WHEN d.status = 'blocked' THEN NULL WHEN k % 3 = 0 THEN 503 WHEN k % 3 = 1 THEN 500 END,
         CASE WHEN ok THEN NULL WHEN d.status = 'blocked' THEN 'ssrf_blocked' WHEN k % 3 = 2 THEN 'timeout' ELSE 'http_status' END,
         CASE WHEN ok THEN '{"received":true}' WHEN d.status = 'blocked' OR k % 3 = 2 THEN NULL
           ELSE '<html><head><title>503 Service Unavailable</title></head><body>upstream connect error</body></html>' END
       FROM deliveries d CROSS JOIN LATERAL generate_series(1, d.attempts) AS k
       CROSS JOIN LATERAL (SELECT d.status = 'succeeded' AND k = d.attempts AS ok) o
       WHERE (d.created_at >= now() - interval '25 hours') = $1`,
      [recent],
    );
  await db.query(`ALTER TABLE delivery_attempts DISABLE TRIGGER USER`);
  await attempts(false);
  await db.query(`ALTER TABLE delivery_attempts ENABLE TRIGGER USER`);
  await attempts(true);
}

/** What the scenarios ask for: the counts, and a merchant, host, delivery and cursor of each kind. */
async function describeSeeded(db: Client, shape: VolumeShape, started: number): Promise<SeededVolume> {
  const one = async <T>(sql: string, params: unknown[] = []) => (await db.query<T & object>(sql, params)).rows[0] as T;
  const counts = await one<{ deliveries: number; attempts: number }>(
    `SELECT (SELECT count(*) FROM deliveries)::int AS deliveries, (SELECT count(*) FROM delivery_attempts)::int AS attempts`,
  );
  const many = await one<{ id: string; attempts: number }>(
    `SELECT id, attempts FROM deliveries ORDER BY attempts DESC, created_at DESC LIMIT 1`,
  );
  const deep = await one<{ createdAt: string; id: string }>(
    `SELECT created_at::text AS "createdAt", id FROM deliveries ORDER BY created_at DESC, id DESC OFFSET $1 LIMIT 1`,
    [Math.floor(counts.deliveries / 2)],
  );
  // A listener of a mid-sized merchant: its host filter walks far down the list for a page.
  const listener = await one<{ host: string }>(`SELECT host FROM seed_listeners WHERE m = 20 AND k = 0`);
  const tx = await one<{ transaction_id: string }>(`SELECT transaction_id FROM deliveries WHERE id = $1`, [many.id]);
  return {
    ...counts,
    seconds: (Date.now() - started) / 1000,
    bigMerchant: publicIdOf(0),
    smallMerchant: publicIdOf(shape.merchants - 1),
    host: listener.host,
    transactionId: tx.transaction_id,
    manyAttempts: many,
    deepCursor: deep,
  };
}
