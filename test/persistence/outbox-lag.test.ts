import { DataSource } from 'typeorm';
import { dataSourceOptions, OutboxRepository } from '@app/persistence';

/**
 * outbox_oldest_unpublished_age_seconds reads OutboxRepository.oldestUnpublishedAgeSeconds on
 * each scrape of the tokenizer: here against an outbox of its own (a schema shaped as the run's,
 * so the stack's relay never publishes its rows), with a published and an unpublished event.
 */
describe('the outbox lag (real Postgres)', () => {
  const schema = `gw_outbox_lag_${process.pid}`;
  let owner: DataSource;
  let db: DataSource;

  beforeAll(async () => {
    owner = await new DataSource(dataSourceOptions(process.env.DATABASE_URL!, 1)).initialize();
    await owner.query(`CREATE SCHEMA ${schema}`);
    await owner.query(`CREATE TABLE ${schema}.outbox (LIKE public.outbox INCLUDING ALL)`);
    const opts = dataSourceOptions(process.env.DATABASE_URL!, 1);
    // Every statement of this pool reads the scratch outbox.
    db = await new DataSource({ ...opts, extra: { ...opts.extra, options: `-c search_path=${schema}` } }).initialize();
  });

  afterAll(async () => {
    await db?.destroy();
    await owner?.query(`DROP SCHEMA IF EXISTS ${schema} CASCADE`);
    await owner?.destroy();
  });

  it('is 0 with nothing waiting, then the age of the oldest unpublished event; a published one does not count', async () => {
    const outbox = new OutboxRepository(db);
    expect(await outbox.oldestUnpublishedAgeSeconds()).toBe(0);
    await db.query(
      `INSERT INTO outbox (id, event, aggregate_id, payload, created_at, published_at) VALUES
       (gen_random_uuid(), 'transaction.captured', gen_random_uuid(), '{}', now() - interval '10 minutes', now()),
       (gen_random_uuid(), 'transaction.captured', gen_random_uuid(), '{}', now() - interval '42 seconds', NULL),
       (gen_random_uuid(), 'transaction.captured', gen_random_uuid(), '{}', now() - interval '5 seconds', NULL)`,
    );
    const age = await outbox.oldestUnpublishedAgeSeconds();
    expect(age).toBeGreaterThanOrEqual(42);
    expect(age).toBeLessThan(45);
    // One lookup of the partial index of unpublished events, not a scan of the outbox.
    await db.query('SET enable_seqscan = off');
    const plan = await db.query<{ 'QUERY PLAN': string }[]>('EXPLAIN SELECT min(created_at) FROM outbox WHERE published_at IS NULL');
    expect(plan.map((r) => r['QUERY PLAN']).join('\n')).toMatch(/Index Only Scan using \w+ on outbox/);
  });
});
