import { randomUUID } from 'node:crypto';
import { DataSource } from 'typeorm';
import { dataSourceOptions, DeliveriesRepository, DeliveryConsoleRepository } from '@app/persistence';
import { createMerchant } from '../support/stack';

jest.setTimeout(60_000);

/** More failing listeners than any run makes: the whole list, compared row for row. */
const ALL_LISTENERS = 100_000;

const HOST = `lower(substring(d.url from '^[A-Za-z][A-Za-z0-9+.-]*://(?:[^/@]*@)?(\\[[^]]*\\]|[^/:?#]*)'))`;

/**
 * The console overview reads counts the database keeps by trigger (migration 1765500000000)
 * instead of counting a million rows. Against real Postgres, after the notifier's batched writes,
 * replays, a delivery marked failed and one deleted, with attempts on both sides of each edge of
 * the 24 h window (its first minute, its first hour, outside it): the overview is what counting
 * the rows themselves gives.
 */
describe('console overview counts (real Postgres)', () => {
  let db: DataSource;
  let repo: DeliveriesRepository;
  let reads: DeliveryConsoleRepository;
  let merchants: string[];

  beforeAll(async () => {
    merchants = [(await createMerchant('overview shop a')).internalId, (await createMerchant('overview shop b')).internalId];
    db = await new DataSource(dataSourceOptions(process.env.DATABASE_URL as string, 4)).initialize();
    repo = new DeliveriesRepository(db);
    reads = new DeliveryConsoleRepository(db);
  });

  afterAll(async () => {
    await db?.destroy();
  });

  /** What the overview showed before the counts: every row counted (the minutes the page draws, > now - 24 h). */
  async function counted() {
    const [backlog, failing, perMinute] = await Promise.all([
      db.query(`SELECT status, count(*)::int AS n FROM deliveries GROUP BY status ORDER BY status`),
      db.query(
        `SELECT d.merchant_id, ${HOST} AS host, count(*)::int AS failed, max(a.started_at) AS last_failed_at
         FROM delivery_attempts a JOIN deliveries d ON d.id = a.delivery_id
         WHERE a.started_at > now() - interval '24 hours' AND a.error_class IS NOT NULL
         GROUP BY 1, 2 ORDER BY failed DESC, last_failed_at DESC LIMIT $1`,
        [ALL_LISTENERS],
      ),
      db.query(
        `SELECT EXTRACT(EPOCH FROM date_trunc('minute', started_at))::bigint::float8 AS minute,
           count(*) FILTER (WHERE error_class IS NULL)::int AS succeeded, count(*) FILTER (WHERE error_class IS NOT NULL)::int AS failed
         FROM delivery_attempts WHERE date_trunc('minute', started_at) > now() - interval '24 hours' GROUP BY 1 ORDER BY 1`,
      ),
    ]);
    return { backlog, failing, perMinute };
  }

  it('matches counting the rows, across batches, replays, deletions and the edges of the 24 h', async () => {
    const hosts = ['a.example', 'B.example', 'c.example:8443', 'user@d.example'];
    const made = await Promise.all(
      Array.from({ length: 120 }, (_, i) =>
        repo.createOnce(
          {
            merchantId: merchants[i % 2],
            transactionId: randomUUID(),
            statusVersion: 2,
            event: 'transaction.status_changed',
            url: `https://${hosts[i % hosts.length]}/hook`,
            origin: null,
            body: '{}',
          },
          i % 3 !== 0,
        ),
      ),
    );
    const now = Date.now();
    // Ages: in the window's first minute, in its first hour (when it has one after that minute), an
    // hour ago, now, and outside the window.
    const start = now - 24 * 3600_000;
    const firstHourEnds = Math.ceil(start / 3600_000) * 3600_000;
    const ages = [
      24 * 3600_000 - 20_000,
      now - (start + Math.max(61_000, (firstHourEnds - start) / 2)),
      3600_000,
      0,
      24 * 3600_000 + 90_000,
    ];
    await Promise.all(
      made.map(({ row }, i) =>
        repo.finishAttempt(
          row.id,
          1,
          {
            startedAt: new Date(now - ages[i % ages.length]),
            durationMs: 5,
            ...(i % 4 ? { httpStatus: 503, errorClass: 'http_status' } : {}),
          },
          i % 4 ? { status: i % 8 === 1 ? 'failed' : 'pending', error: 'HTTP 503' } : { status: 'succeeded' },
        ),
      ),
    );
    // A second round for some, in one batch, then the operator's and the sweeper's changes.
    await Promise.all(
      made
        .slice(0, 40)
        .map(({ row }, i) =>
          repo.finishAttempt(
            row.id,
            2,
            { startedAt: new Date(now - ages[(i + 2) % ages.length]), durationMs: 7, errorClass: 'timeout' },
            { status: 'failed' },
          ),
        ),
    );
    for (const { row } of made.slice(40, 50)) await repo.resetForReplay(row.id);
    for (const { row } of made.slice(50, 60)) await repo.markFailedIfOpen(row.id, 'gave up');
    // Nothing deletes attempts; a delivery without any can go (a test's clean-up does).
    const [gone] = await db.query(
      `INSERT INTO deliveries (id, merchant_id, transaction_id, status_version, event, url, body) VALUES ($1, $2, $3, 2, 'e', 'https://x.example/', '{}') RETURNING id`,
      [randomUUID(), merchants[0], randomUUID()],
    );
    await db.query(`DELETE FROM deliveries WHERE id = $1`, [gone.id]);

    // Every listener, not the page's ten: the run's other suites share this database, and their listeners may outnumber these.
    const [o, expected] = await Promise.all([reads.overview(ALL_LISTENERS), counted()]);
    expect(o.backlog).toEqual(expected.backlog);
    expect(o.perMinute).toEqual(expected.perMinute);
    expect(o.perMinute.length).toBeGreaterThan(2);
    // Listeners tied on both sort keys may come in either order.
    const byListener = (rows: { merchant_id: string; host: string }[]) =>
      [...rows].sort((a, b) => `${a.merchant_id} ${a.host}`.localeCompare(`${b.merchant_id} ${b.host}`));
    expect(byListener(o.failingListeners)).toEqual(byListener(expected.failing));
    const ours = o.failingListeners.filter((l) => merchants.includes(l.merchant_id)).map((l) => l.host);
    expect(ours).toEqual(expect.arrayContaining(['a.example', 'c.example', 'd.example']));
  });
});
