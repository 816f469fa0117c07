import { setTimeout as sleep } from 'node:timers/promises';
import { Client } from 'pg';
import { DataSource } from 'typeorm';
import { dataSourceOptions, RecoveriesRepository, RecoveryRow } from '@app/persistence';
import { insertDeliveries, LOCAL_LISTENER_ENV } from '../support/deliveries';
import { Listener } from '../support/listener';
import { createMerchant, eventually, MerchantCredentials, runCli, runCliRaw, Stack, startStack } from '../support/stack';

jest.setTimeout(300_000);

type Json = Record<string, unknown>;

/**
 * Recoveries end to end (issue 16, "recover"): "replay every failed delivery of merchant M
 * (optionally one listener) since T", counted at the start, run by the notifier a page at a time
 * (20 per page and 400 ms between pages here, so a run of a few hundred takes seconds), each
 * delivery replayed once even when two steps run at once, cancellable mid-way, and going on from
 * its cursor after the notifier running it is killed. The deliveries are failed ones inserted by
 * SQL, pointing at a local listener that answers 200.
 */
describe('recoveries: bulk replay with a count, progress, cancel and resume', () => {
  let stack: Stack;
  let shop: MerchantCredentials;
  let other: MerchantCredentials;
  let listener: Listener;
  let elsewhere: Listener;
  let db: Client;
  let orm: DataSource;
  let recoveries: RecoveriesRepository;

  const origin = (l: Listener) => `http://127.0.0.1:${l.port}`;

  /** `n` deliveries of `merchantId` in `status`, created `ageS` seconds ago (1 ms apart), to `path` on `l`. */
  const insert = (merchantId: string, l: Listener, path: string, n: number, status = 'failed', ageS = 60) =>
    insertDeliveries(db, { merchantId, url: `${origin(l)}${path}`, origin: origin(l), n, status, ageS });
  /** webhooks:replay --merchant … --since (ageS ago) --origin (l's), and more options. */
  const replay = (merchantId: string, ageS: number, l: Listener, ...more: string[]) =>
    runCli<Json>(['webhooks:replay', '--merchant', merchantId, '--since', since(ageS), '--origin', origin(l), ...more]);

  const statusesOf = async (ids: string[]): Promise<Record<string, number>> => {
    const rows: { status: string; n: number }[] = (
      await db.query(`SELECT status, count(*)::int AS n FROM deliveries WHERE id = ANY ($1::uuid[]) GROUP BY status`, [ids])
    ).rows;
    return Object.fromEntries(rows.map((r) => [r.status, r.n]));
  };
  const replaysOf = async (ids: string[]): Promise<number[]> =>
    (await db.query(`SELECT replays FROM deliveries WHERE id = ANY ($1::uuid[])`, [ids])).rows.map((r: { replays: number }) => r.replays);
  const recoveryRow = async (id: string): Promise<RecoveryRow> => (await recoveries.find(id))!;
  /** The webhook-ids the listener received at `path`, each once. */
  const receivedIds = (l: Listener, path: string) => l.at(path).map((r) => String(r.headers['webhook-id']));
  const since = (ageS: number) => new Date(Date.now() - ageS * 1000).toISOString();

  beforeAll(async () => {
    db = new Client({ connectionString: process.env.DATABASE_URL });
    await db.connect();
    orm = await new DataSource(dataSourceOptions(process.env.DATABASE_URL as string, 6)).initialize();
    recoveries = new RecoveriesRepository(orm);
    listener = await new Listener().start();
    elsewhere = await new Listener().start();
    stack = await startStack(
      {},
      {
        envFor: {
          notifier: {
            ...LOCAL_LISTENER_ENV,
            WEBHOOK_SWEEP_INTERVAL_MS: '500',
            WEBHOOK_SWEEP_GRACE_S: '1',
            RECOVERY_PAGE_SIZE: '20',
            RECOVERY_PAUSE_MS: '400',
          },
        },
      },
    );
    shop = await createMerchant('recover shop');
    other = await createMerchant('recover other shop');
  });

  afterAll(async () => {
    await stack?.stop();
    await listener?.stop();
    await elsewhere?.stop();
    await orm?.destroy();
    await db?.end();
  });

  it('replays only the chosen merchant, listener and time, failed only unless blocked is asked, each once, and counts them first', async () => {
    const mine = await insert(shop.internalId, listener, '/scope', 30);
    const old = await insert(shop.internalId, listener, '/scope', 5, 'failed', 7200);
    const blocked = await insert(shop.internalId, listener, '/scope', 4, 'blocked');
    const succeeded = await insert(shop.internalId, listener, '/scope', 3, 'succeeded');
    const otherListener = await insert(shop.internalId, elsewhere, '/scope', 6);
    const otherMerchant = await insert(other.internalId, listener, '/scope', 7);

    const scope = { merchantId: shop.internalId, origin: origin(listener), since: new Date(since(3600)), states: ['failed' as const] };
    expect(await recoveries.count(scope)).toBe(30);
    expect(await recoveries.count({ ...scope, origin: undefined })).toBe(36);
    expect(await recoveries.count({ ...scope, states: ['failed', 'blocked'] })).toBe(34);

    const out = await replay(shop.merchantId, 3600, listener);
    expect(out).toMatchObject({
      merchantId: shop.merchantId,
      origin: origin(listener),
      state: 'finished',
      found: 30,
      queued: 30,
      skipped: 0,
    });
    await eventually(() => expect(new Set(receivedIds(listener, '/scope'))).toEqual(new Set(mine)), { timeoutMs: 30_000 });
    expect(await statusesOf(mine)).toEqual({ succeeded: 30 });
    expect(await replaysOf(mine)).toEqual(mine.map(() => 1));
    expect(await statusesOf(old)).toEqual({ failed: 5 });
    expect(await statusesOf(blocked)).toEqual({ blocked: 4 });
    expect(await statusesOf(succeeded)).toEqual({ succeeded: 3 });
    expect(await statusesOf(otherListener)).toEqual({ failed: 6 });
    expect(await statusesOf(otherMerchant)).toEqual({ failed: 7 });
    expect(elsewhere.at('/scope')).toHaveLength(0);

    // The audit trail names the recovery; a second run finds nothing left.
    const audit = (
      await db.query(
        `SELECT outcome, target FROM audit_events WHERE action = 'webhooks:replay' AND target = $1 AND outcome <> 'attempted' ORDER BY id`,
        [out.recoveryId],
      )
    ).rows;
    expect(audit.map((r: Json) => r.outcome)).toEqual(['ok']);
    const again = await replay(shop.merchantId, 3600, listener);
    expect(again).toMatchObject({ state: 'finished', found: 0, queued: 0 });

    // A host names the listener when the merchant has one there; a malformed time or origin is refused naming the option.
    await db.query(`INSERT INTO listeners (merchant_id, origin) VALUES ($1, $2) ON CONFLICT DO NOTHING`, [
      shop.internalId,
      origin(elsewhere),
    ]);
    const byHost = await runCli<Json>([
      'webhooks:replay',
      '--merchant',
      shop.merchantId,
      '--since',
      since(3600),
      '--origin',
      `127.0.0.1:${elsewhere.port}`,
    ]);
    expect(byHost).toMatchObject({ origin: origin(elsewhere), found: 6, queued: 6 });
    const bad = await runCliRaw(['webhooks:replay', '--merchant', shop.merchantId, '--since', 'yesterday']);
    expect([bad.code, bad.stderr]).toEqual([1, expect.stringContaining('--since')]);
    const badOrigin = await runCliRaw([
      'webhooks:replay',
      '--merchant',
      shop.merchantId,
      '--since',
      since(60),
      '--origin',
      'nowhere.example',
    ]);
    expect([badOrigin.code, badOrigin.stderr]).toEqual([1, expect.stringContaining('--origin')]);
  });

  it('replays each delivery once when several steps of one recovery run at once', async () => {
    const ids = await insert(shop.internalId, listener, '/concurrent', 150);
    // Started here, not queued: only these steps run it (the delivery sweeper queues what they reset).
    const operatorId: string = (await db.query(`SELECT id FROM operators ORDER BY created_at LIMIT 1`)).rows[0].id;
    const r = await recoveries.start({ merchantId: shop.internalId, since: new Date(since(120)), states: ['failed'] }, operatorId);
    expect(r.total).toBe(150);
    const replayed: string[] = [];
    const runner = async () => {
      for (;;) {
        const step = await recoveries.step(r.id, 7);
        replayed.push(...step!.replayed.map((d) => d.id));
        if (step!.state !== 'running') return;
      }
    };
    await Promise.all([runner(), runner(), runner(), runner()]);
    expect(replayed).toHaveLength(150);
    expect(new Set(replayed)).toEqual(new Set(ids));
    expect(await recoveryRow(r.id)).toMatchObject({ state: 'finished', total: 150, replayed: 150, skipped: 0 });
    expect(await replaysOf(ids)).toEqual(ids.map(() => 1));
    // Reset but never queued by these steps (as after a crash between the commit and the queue): the sweeper queues them.
    await eventually(() => expect(new Set(receivedIds(listener, '/concurrent'))).toEqual(new Set(ids)), { timeoutMs: 60_000 });
  });

  it('a cancel stops a running recovery between two pages; the rest stay failed', async () => {
    const ids = await insert(shop.internalId, listener, '/cancel', 400);
    const started = await replay(shop.merchantId, 120, listener, '--no-wait');
    expect(started).toMatchObject({ state: 'running', found: 400, queued: 0 });
    const id = String(started.recoveryId);
    await eventually(async () => expect((await recoveryRow(id)).replayed).toBeGreaterThanOrEqual(40), { intervalMs: 50 });
    const cancelled = await runCli<Json>(['webhooks:recover-cancel', '--id', id]);
    expect(cancelled).toMatchObject({ recoveryId: id, state: 'cancelled' });
    await sleep(1_000);
    const r = await recoveryRow(id);
    expect(r.state).toBe('cancelled');
    expect(r.replayed).toBeLessThan(400);
    expect(r.replayed).toBe(Number(cancelled.replayed));
    expect(r.skipped).toBe(400 - r.replayed);
    await eventually(async () => expect(await statusesOf(ids)).toEqual({ succeeded: r.replayed, failed: 400 - r.replayed }), {
      timeoutMs: 30_000,
    });
    expect(new Set(receivedIds(listener, '/cancel')).size).toBe(r.replayed);
    const twice = await runCliRaw(['webhooks:recover-cancel', '--id', id]);
    expect([twice.code, twice.stderr]).toEqual([1, expect.stringContaining('not running')]);
    const events = (
      await db.query(
        `SELECT outcome FROM audit_events WHERE action = 'webhooks:recover-cancel' AND target = $1 AND outcome <> 'attempted' ORDER BY id`,
        [id],
      )
    ).rows.map((e: Json) => e.outcome);
    expect(events).toEqual(['ok', 'failed']);
  });

  it('goes on from its cursor after the notifier running it is killed, still replaying each delivery once', async () => {
    const third = await createMerchant('recover resumed shop');
    const ids = await insert(third.internalId, listener, '/resume', 300);
    const started = await replay(third.merchantId, 120, listener, '--no-wait');
    const id = String(started.recoveryId);
    await eventually(async () => expect((await recoveryRow(id)).replayed).toBeGreaterThanOrEqual(40), { intervalMs: 50 });
    await stack.restart('notifier', 'SIGKILL');
    const atKill = (await recoveryRow(id)).replayed;
    expect(atKill).toBeLessThan(300);
    await eventually(async () => expect(await recoveryRow(id)).toMatchObject({ state: 'finished', total: 300, replayed: 300 }), {
      timeoutMs: 90_000,
      intervalMs: 500,
    });
    expect(await replaysOf(ids)).toEqual(ids.map(() => 1));
    await eventually(() => expect(new Set(receivedIds(listener, '/resume'))).toEqual(new Set(ids)), { timeoutMs: 60_000 });
  });
});
