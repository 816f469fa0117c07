import { randomBytes, randomUUID } from 'node:crypto';
import { DataSource } from 'typeorm';
import {
  dataSourceOptions,
  IdempotencyKeysRepository,
  newMerchantPublicId,
  PrunedTable,
  RetentionRepository,
  RoleOwner,
} from '@app/persistence';
import { PRUNED_TABLES, RETENTION_OWNERS, RetentionPruner } from '@app/retention';
import { EnvReader, readRetentionConfig, RetentionConfig } from '@app/platform';
import { createDatabaseIfMissing, dropDatabase, roleUrl, withDatabase } from '../../scripts/lib/database';

jest.setTimeout(180_000);

const DAY = 86_400_000;
const HOUR = 3_600_000;
/** The defaults, with small batches so every rule takes several. */
const config = (): RetentionConfig => ({ ...readRetentionConfig(new EnvReader({})), batchRows: 3 });

/**
 * The retention rules (docs/operations/retention.md) against real Postgres, in a database of
 * their own (migrated here), each run as the app that owns it, under that app's role: each deletes
 * exactly what is past its age, and nothing younger or still needed.
 */
describe('retention (real Postgres)', () => {
  const url = withDatabase(process.env.DATABASE_URL!, `gw_retention_${process.pid}`);
  let owner: DataSource;
  const asRole = new Map<RoleOwner, DataSource>();
  let merchantId: string;
  let operatorId: string;

  const pruner = (app: RoleOwner, tables?: PrunedTable[], cfg = config()): RetentionPruner =>
    tables
      ? new RetentionPruner(new RetentionRepository(asRole.get(app)!), tables, cfg)
      : RetentionPruner.of(app, new RetentionRepository(asRole.get(app)!), cfg);
  const ago = (ms: number) => new Date(Date.now() - ms);
  const rowsOf = async (sql: string, params: unknown[] = []): Promise<string[]> =>
    (await owner.query<{ k: string }[]>(sql, params)).map((r) => r.k).sort();

  beforeAll(async () => {
    await createDatabaseIfMissing(url);
    owner = await new DataSource(dataSourceOptions(url, 4)).initialize();
    await owner.runMigrations({ transaction: 'each' });
    for (const app of ['api', 'console', 'tokenizer', 'notifier', 'cli'] as const)
      asRole.set(app, await new DataSource(dataSourceOptions(roleUrl(url, app), 4)).initialize());
    merchantId = randomUUID();
    await owner.query(
      `INSERT INTO merchants (id, public_id, name, key_hash, webhook_secrets_kek_id, webhook_secret_sealed)
       VALUES ($1, $2, 'retention shop', $3, 'k1', $3)`,
      [merchantId, newMerchantPublicId(), randomBytes(32)],
    );
    operatorId = randomUUID();
    await owner.query(`INSERT INTO operators (id, name, role, token_hash) VALUES ($1, 'retention-admin', 'admin', $2)`, [
      operatorId,
      randomBytes(32),
    ]);
  });

  afterAll(async () => {
    for (const db of asRole.values()) await db.destroy();
    await owner?.destroy();
    await dropDatabase(url);
  });

  it('gives each table one owner app, and each app its own tables only', () => {
    expect(PRUNED_TABLES.map((t) => `${t}:${RETENTION_OWNERS[t]}`).sort()).toEqual(
      [
        'audit_events:console',
        'console_sessions:console',
        'deliveries:notifier',
        'delivery_attempts:notifier',
        'idempotency_keys:api',
        'outbox:tokenizer',
        'portal_links:console',
        'sandbox_calls:tokenizer',
      ].sort(),
    );
  });

  it('idempotency keys: past 24 h deleted, younger kept, and a key within 24 h still replays', async () => {
    const keys = new IdempotencyKeysRepository(asRole.get('api')!);
    for (const [key, age] of [
      ['old-1', DAY + 60_000],
      ['old-2', 3 * DAY],
      ['young-1', DAY - 60_000],
      ['young-2', HOUR],
    ] as const)
      await owner.query(
        `INSERT INTO idempotency_keys (merchant_id, key, request_hash, response_status, response_body, created_at) VALUES ($1, $2, $3, 201, '{"ok":true}', $4)`,
        [merchantId, key, Buffer.from(key), ago(age)],
      );
    const [pass] = await pruner('api', ['idempotency_keys']).run();
    expect(pass).toEqual({ table: 'idempotency_keys', rows: 2 });
    expect(await rowsOf(`SELECT key AS k FROM idempotency_keys WHERE merchant_id = $1`, [merchantId])).toEqual(['young-1', 'young-2']);
    // The API's replay reads the stored answer of a key within its 24 h: still there.
    const replay = await keys.find(merchantId, 'young-1');
    expect(replay).toMatchObject({ responseStatus: 201, responseBody: { ok: true } });
    expect(await keys.claim(merchantId, 'young-1', Buffer.from('other'))).toBe(false);
  });

  it('outbox: published rows past the age deleted; an unpublished row never, however old', async () => {
    const rows = [
      ['published-old', 8 * DAY, 7 * DAY + 60_000],
      ['published-young', 8 * DAY, 7 * DAY - 60_000],
      ['unpublished-ancient', 400 * DAY, null],
    ] as const;
    const ids = new Map<string, string>();
    for (const [name, created, published] of rows) {
      const id = randomUUID();
      ids.set(id, name);
      await owner.query(
        `INSERT INTO outbox (id, event, aggregate_id, payload, created_at, published_at) VALUES ($1, 'transaction.status_changed', $1, '{}', $2, $3)`,
        [id, ago(created), published === null ? null : ago(published)],
      );
    }
    const [pass] = await pruner('tokenizer', ['outbox']).run();
    expect(pass).toEqual({ table: 'outbox', rows: 1 });
    const left = await rowsOf(`SELECT id::text AS k FROM outbox`);
    expect(left.map((id) => ids.get(id)).sort()).toEqual(['published-young', 'unpublished-ancient']);
  });

  it('sandbox calls: an authorization goes with all its calls once the last is past the age; reconciliation of recent days still finds its books', async () => {
    const call = (key: string, kind: string, tid: string | null, age: number, amount = 1000) =>
      owner.query(
        `INSERT INTO sandbox_calls (operation_key, kind, amount, tid, result, created_at, capture) VALUES ($1, $2, $3, $4, $5, $6, false)`,
        [key, kind, amount, tid, JSON.stringify({ outcome: 'approved', tid }), ago(age)],
      );
    await call('auth-recent-capture', 'authorize', 'TID-A', 100 * DAY); // captured yesterday: kept with its capture
    await call('capture-recent', 'capture', 'TID-A', DAY);
    await call('auth-old', 'authorize', 'TID-B', 91 * DAY); // nothing since: goes
    await call('cancel-old', 'cancel', 'TID-B', 90 * DAY + HOUR);
    await call('refused-no-tid', 'authorize', null, 95 * DAY); // goes
    // Fences (no authorization, tid ''): each on its own age, not held by a younger fence.
    await call('fence-old', 'cancel', '', 95 * DAY); // goes
    await call('fence-young', 'cancel', '', DAY); // kept
    await call('auth-young', 'authorize', 'TID-C', 89 * DAY); // younger than 90 d: kept
    const [pass] = await pruner('tokenizer', ['sandbox_calls']).run();
    expect(pass).toEqual({ table: 'sandbox_calls', rows: 4 });
    expect(await rowsOf(`SELECT operation_key AS k FROM sandbox_calls`)).toEqual([
      'auth-recent-capture',
      'auth-young',
      'capture-recent',
      'fence-young',
    ]);
    // The books the reconciliation reads for TID-A (authorized 100 days ago, captured yesterday): whole.
    const [book] = await owner.query(
      `SELECT bool_or(kind = 'authorize') AS authorized, SUM(amount) FILTER (WHERE kind = 'capture')::int AS captured FROM sandbox_calls WHERE tid = 'TID-A'`,
    );
    expect(book).toEqual({ authorized: true, captured: 1000 });
  });

  it('deliveries: finished ones past the age deleted with their attempts, open and younger kept, the overview counts right', async () => {
    const make = async (status: string, updatedAgo: number, attemptAgo?: number) => {
      const id = randomUUID();
      await owner.query(
        `INSERT INTO deliveries (id, merchant_id, transaction_id, status_version, event, url, body, status, created_at, updated_at)
         VALUES ($1, $2, $3, 2, 'transaction.status_changed', 'https://hooks.example/x', '{}', $4, $5, $5)`,
        [id, merchantId, randomUUID(), status, ago(updatedAgo)],
      );
      if (attemptAgo !== undefined)
        await owner.query(
          `INSERT INTO delivery_attempts (delivery_id, attempt, started_at, duration_ms, http_status) VALUES ($1, 1, $2, 12, 200)`,
          [id, ago(attemptAgo)],
        );
      return id;
    };
    const gone = [await make('succeeded', 91 * DAY, 91 * DAY), await make('failed', 120 * DAY), await make('blocked', 95 * DAY)];
    const kept = [await make('pending', 200 * DAY), await make('succeeded', 89 * DAY, 89 * DAY), await make('held', 100 * DAY)];
    const [pass] = await pruner('notifier', ['deliveries']).run();
    expect(pass).toEqual({ table: 'deliveries', rows: 3 });
    expect(await rowsOf(`SELECT id::text AS k FROM deliveries`)).toEqual([...kept].sort());
    expect(await rowsOf(`SELECT delivery_id::text AS k FROM delivery_attempts`)).toEqual([kept[1]]);
    expect(gone.length).toBe(3);
    // The console overview's counts (kept by trigger) are what counting the rows gives.
    const counts = await owner.query(`SELECT status, n::int FROM delivery_state_counts WHERE n <> 0 ORDER BY status`);
    const counted = await owner.query(`SELECT status, count(*)::int AS n FROM deliveries GROUP BY status ORDER BY status`);
    expect(counts).toEqual(counted);
  });

  it('console sessions and portal links: ended, expired or revoked past the age deleted, the rest kept', async () => {
    const session = async (name: string, endedAgo: number | null, expiresAgo: number) => {
      await owner.query(
        `INSERT INTO console_sessions (id_hash, operator_id, created_at, expires_at, ended_at) VALUES ($1, $2, $3, $4, $5)`,
        [Buffer.alloc(32, name), operatorId, ago(expiresAgo + 8 * HOUR), ago(expiresAgo), endedAgo === null ? null : ago(endedAgo)],
      );
    };
    await session('a', 8 * DAY, 7 * DAY); // ended 8 days ago: goes
    await session('b', null, 7 * DAY + HOUR); // expired over 7 days ago: goes
    await session('c', null, 6 * DAY); // expired 6 days ago: kept
    await session('d', null, -HOUR); // open: kept
    const link = async (expiresAgo: number, revokedAgo: number | null) => {
      const id = randomUUID();
      await owner.query(
        `INSERT INTO portal_links (id, merchant_id, expires_at, created_by, created_at, revoked_at, revoked_by) VALUES ($1, $2, $3, $4, $5, $6, $7)`,
        [
          id,
          merchantId,
          ago(expiresAgo),
          operatorId,
          ago(expiresAgo + DAY),
          revokedAgo === null ? null : ago(revokedAgo),
          revokedAgo === null ? null : operatorId,
        ],
      );
      return id;
    };
    const expiredLongAgo = await link(31 * DAY, null);
    const revokedLongAgo = await link(-30 * DAY, 31 * DAY);
    const keptLinks = [await link(29 * DAY, null), await link(-DAY, null), await link(-DAY, 29 * DAY)];
    const passes = await pruner('console', ['console_sessions', 'portal_links']).run();
    expect(passes).toEqual([
      { table: 'console_sessions', rows: 2 },
      { table: 'portal_links', rows: 2 },
    ]);
    expect(await rowsOf(`SELECT encode(id_hash, 'hex') AS k FROM console_sessions`)).toEqual(
      ['c', 'd'].map((n) => Buffer.alloc(32, n).toString('hex')).sort(),
    );
    const left = await rowsOf(`SELECT id::text AS k FROM portal_links`);
    expect(left).toEqual([...keptLinks].sort());
    expect(left).not.toContain(expiredLongAgo);
    expect(left).not.toContain(revokedLongAgo);
  });

  it('a dry run counts what is past each age and deletes nothing', async () => {
    for (let i = 0; i < 5; i++)
      await owner.query(`INSERT INTO idempotency_keys (merchant_id, key, request_hash, created_at) VALUES ($1, $2, '\\x00', $3)`, [
        merchantId,
        `dry-${i}`,
        ago(2 * DAY),
      ]);
    const before = await owner.query(`SELECT count(*)::int AS n FROM idempotency_keys`);
    const [pass] = await pruner('cli', ['idempotency_keys']).run({ dry: true });
    expect(pass).toEqual({ table: 'idempotency_keys', rows: 5 });
    expect(await owner.query(`SELECT count(*)::int AS n FROM idempotency_keys`)).toEqual(before);
  });

  it('two pruners at once: every old row deleted once, none twice, no deadlock, nothing younger', async () => {
    await owner.query(
      `INSERT INTO outbox (id, event, aggregate_id, payload, created_at, published_at)
       SELECT gen_random_uuid(), 'transaction.status_changed', gen_random_uuid(), '{}', now() - interval '30 days', now() - interval '10 days' - g * interval '1 second'
       FROM generate_series(1, 3000) g`,
    );
    await owner.query(
      `INSERT INTO outbox (id, event, aggregate_id, payload, published_at)
       SELECT gen_random_uuid(), 'transaction.status_changed', gen_random_uuid(), '{}', now() - interval '1 day' FROM generate_series(1, 50)`,
    );
    const young = await owner.query(
      `SELECT count(*)::int AS n FROM outbox WHERE published_at > now() - interval '7 days' OR published_at IS NULL`,
    );
    // Two replicas (two pools), each pass in small batches, started together, twice over.
    const cfg = { ...config(), batchRows: 50 };
    const second = await new DataSource(dataSourceOptions(roleUrl(url, 'tokenizer'), 4)).initialize();
    try {
      const a = new RetentionPruner(new RetentionRepository(asRole.get('tokenizer')!), ['outbox'], cfg);
      const b = new RetentionPruner(new RetentionRepository(second), ['outbox'], cfg);
      const passes = (await Promise.all([a.run(), b.run(), a.run(), b.run()])).flat();
      const deleted = passes.reduce((n, p) => n + p.rows, 0);
      expect(deleted).toBe(3000);
      expect(passes.every((p) => p.table === 'outbox')).toBe(true);
      expect(await owner.query(`SELECT count(*)::int AS n FROM outbox`)).toEqual(young);
    } finally {
      await second.destroy();
    }
  });

  it('delivery attempts: day partitions are made ahead, and dropped whole once past the age (rows counted), under the notifier role', async () => {
    const parts = async () =>
      (
        await owner.query<{ name: string }[]>(
          `SELECT c.relname AS name FROM pg_inherits i JOIN pg_class c ON c.oid = i.inhrelid
           WHERE i.inhparent = 'delivery_attempts'::regclass ORDER BY 1`,
        )
      ).map((r) => r.name);
    const dayName = (offset: number) =>
      `delivery_attempts_p${new Date(Date.now() + offset * DAY).toISOString().slice(0, 10).replace(/-/g, '')}`;
    // The migration made a week ahead; the notifier's pass keeps a week ahead of its now.
    expect(await parts()).toEqual(expect.arrayContaining(['delivery_attempts_legacy', dayName(2), dayName(6)]));
    const deliveryId = randomUUID();
    await owner.query(
      `INSERT INTO deliveries (id, merchant_id, transaction_id, status_version, event, url, body, status)
       VALUES ($1, $2, $3, 2, 'transaction.status_changed', 'https://hooks.example/y', '{}', 'succeeded')`,
      [deliveryId, merchantId, randomUUID()],
    );
    // An attempt in the legacy partition (today) and three in the day after tomorrow's.
    await owner.query(
      `INSERT INTO delivery_attempts (delivery_id, attempt, started_at, duration_ms, http_status)
       SELECT $1::uuid, g, $2::timestamptz + g * interval '1 minute', 5, 200 FROM generate_series(1, 3) g
       UNION ALL SELECT $1::uuid, 9, now(), 5, 200`,
      [deliveryId, new Date(Date.UTC(new Date().getUTCFullYear(), new Date().getUTCMonth(), new Date().getUTCDate() + 2))],
    );
    const legacyRows = (await owner.query<{ n: number }[]>(`SELECT count(*)::int AS n FROM delivery_attempts_legacy`))[0].n;

    // As if 33 days from now: the legacy partition (up to the day after tomorrow) and day +2 are past 30 days; days up to +40 are made.
    const later = new Date(Date.now() + 33 * DAY);
    const dry = await pruner('notifier', ['delivery_attempts']).run({ dry: true, now: later });
    expect(dry[0].partitions?.filter((p) => p.action === 'drop').map((p) => p.partition)).toEqual(['delivery_attempts_legacy', dayName(2)]);
    expect(await parts()).toContain('delivery_attempts_legacy');

    const [pass] = await pruner('notifier', ['delivery_attempts']).run({ now: later });
    const drops = pass.partitions!.filter((p) => p.action === 'drop');
    expect(drops).toEqual([
      { partition: 'delivery_attempts_legacy', action: 'drop', rows: legacyRows },
      { partition: dayName(2), action: 'drop', rows: 3 },
    ]);
    expect(pass.rows).toBe(legacyRows + 3);
    const after = await parts();
    expect(after).not.toContain('delivery_attempts_legacy');
    expect(after).not.toContain(dayName(2));
    expect(after).toEqual(expect.arrayContaining([dayName(3), dayName(39)]));
    expect(pass.partitions!.filter((p) => p.action === 'create').map((p) => p.partition)).toContain(dayName(39));
    // The console's reads still work on the partitioned table (its indexes are the parent's).
    expect(await owner.query(`SELECT count(*)::int AS n FROM delivery_attempts WHERE delivery_id = $1`, [deliveryId])).toEqual([{ n: 0 }]);
    // Writing today needs today's partition: the pass at the real now makes it again.
    await pruner('notifier', ['delivery_attempts']).run();
    await owner.query(`INSERT INTO delivery_attempts (delivery_id, attempt, started_at, duration_ms) VALUES ($1, 10, now(), 5)`, [
      deliveryId,
    ]);
    // The notifier's role may run the function, but not create or drop a partition itself.
    await expect(asRole.get('notifier')!.query(`DROP TABLE ${dayName(3)}`)).rejects.toThrow(/must be owner/);
    await expect(asRole.get('api')!.query(`SELECT * FROM delivery_attempts_partitions(now(), now(), true)`)).rejects.toThrow(
      /permission denied/,
    );
  });

  it('a second notifier calling the partition function at the same moment gets nothing to do (one at a time)', async () => {
    const notifier = asRole.get('notifier')!;
    const other = await new DataSource(dataSourceOptions(roleUrl(url, 'notifier'), 1)).initialize();
    const q = other.createQueryRunner();
    try {
      await q.startTransaction();
      await q.query(`SELECT * FROM delivery_attempts_partitions(now() - interval '30 days', now() + interval '60 days', false)`);
      // The first holds the table's pass until it commits: this one leaves it.
      const [pass] = await new RetentionPruner(new RetentionRepository(notifier), ['delivery_attempts'], config()).run();
      expect(pass).toEqual({ table: 'delivery_attempts', rows: 0, partitions: [], skipped: true });
      await q.commitTransaction();
    } finally {
      await q.release();
      await other.destroy();
    }
  });

  it('rejects bad settings, each named', () => {
    const problems = (env: NodeJS.ProcessEnv): string[] => {
      const r = new EnvReader(env);
      readRetentionConfig(r);
      try {
        r.done('x');
        return [];
      } catch (e) {
        return (e as Error).message.split('\n  - ').slice(1);
      }
    };
    expect(problems({})).toEqual([]);
    expect(problems({ RETENTION_IDEMPOTENCY_KEYS: '12h' })[0]).toMatch(/^RETENTION_IDEMPOTENCY_KEYS must be a duration .* from 86400s/);
    expect(problems({ RETENTION_DELIVERY_ATTEMPTS: '36h' })).toEqual([
      'RETENTION_DELIVERY_ATTEMPTS must be whole days (the attempts are kept in daily partitions), e.g. 30d',
    ]);
    expect(problems({ RETENTION_DELIVERY_ATTEMPTS: '60d', RETENTION_DELIVERIES: '30d' })).toEqual([
      'RETENTION_DELIVERIES must be at least RETENTION_DELIVERY_ATTEMPTS (a delivery outlives its attempts)',
    ]);
    expect(problems({ RETENTION_OUTBOX: 'soon' })[0]).toMatch(/^RETENTION_OUTBOX must be a duration/);
    expect(problems({ RETENTION_AUDIT: '29d' })[0]).toMatch(/^RETENTION_AUDIT must be a duration .* from 2592000s/);
    expect(problems({ RETENTION_BATCH: '0' })[0]).toMatch(/^RETENTION_BATCH must be a whole number from 1 to 50000/);
  });
});
