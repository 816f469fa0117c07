import { randomBytes } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import { Client } from 'pg';
import { createMerchant, eventually, MerchantCredentials, post, runCli, runCliRaw, Stack, startStack } from '../support/stack';
import { CANARY_CODES, SANDBOX_CARDS } from '../fixtures/cards';
import { auditReader } from '../support/console-browser';
import { LOCAL_LISTENER_ENV } from '../support/deliveries';
import { Listener } from '../support/listener';

jest.setTimeout(300_000);

/**
 * Listener health end to end (issue 16, item 2): a listener failing with no success for
 * LISTENER_DISABLE_AFTER (2 s here) is disabled by the notifier and audited as such; its retries
 * and its new deliveries are held, never attempted, while the merchant's report keeps working;
 * listener:enable releases them and the listener receives them oldest first. Operators disable
 * and enable by hand, audited; a viewer cannot. Deliveries left held while their listener is
 * enabled (a retry that raced an enable) are released by the notifier's sweeper, oldest first, and
 * the notifier's /metrics reports the held count and the oldest held age.
 */
describe('listener health: auto-disable, held deliveries, release in order', () => {
  let stack: Stack;
  let shop: MerchantCredentials;
  let listener: Listener;
  let db: Client;
  let ref = 0;
  let failing = true;
  const suffix = randomBytes(3).toString('hex');
  const tokens = { viewer: '', operator: '' };

  const receiver = (op: string, body: unknown) =>
    post(stack.baseUrl, '/v1/receiver', {
      'transaction-request': {
        version: '1.0.0',
        verification: { merchantId: shop.merchantId, merchantKey: shop.merchantKey },
        [op]: body,
      },
    });
  const sale = async (urlReturn: string): Promise<string> => {
    const res = await receiver('sale', {
      order: { reference: `LH-${suffix}-${++ref}`, totalAmount: 5_000 },
      payment: {
        acquirer: 26,
        method: 1,
        amount: 5_000,
        currency: '986',
        country: 'BRA',
        numberOfPayments: 1,
        cardHolder: 'MARIA SILVA',
        cardNumber: SANDBOX_CARDS[1],
        cardSecurityCode: CANARY_CODES[3],
        cardExpirationDate: '203012',
      },
      urlReturn,
      fraud: 'false',
    });
    expect(res.json).toMatchObject({ status: '8' });
    return res.json.transactionId as string;
  };
  const origin = () => `http://127.0.0.1:${listener.port}`;
  const listenerRow = async () =>
    (await db.query('SELECT * FROM listeners WHERE merchant_id = $1 AND origin = $2', [shop.internalId, origin()])).rows[0];
  const deliveryOf = async (transactionId: string) => {
    const rows = (await db.query('SELECT * FROM deliveries WHERE transaction_id = $1', [transactionId.toLowerCase()])).rows;
    expect(rows).toHaveLength(1);
    return rows[0];
  };
  const audit = () => auditReader(db);
  const as = (token: string, args: string[]) => runCliRaw(args, { GATEWAY_OPERATOR_TOKEN: token });

  beforeAll(async () => {
    db = new Client({ connectionString: process.env.DATABASE_URL });
    await db.connect();
    listener = await new Listener().start();
    listener.on('/hook', () => ({ status: failing ? 503 : 200 }));
    stack = await startStack(
      {},
      {
        envFor: {
          notifier: {
            ...LOCAL_LISTENER_ENV,
            // One attempt at a time: released deliveries reach the listener in the order they were queued.
            WEBHOOK_CONCURRENCY: '1',
            LISTENER_DISABLE_AFTER: '2s',
            // The sweeper's pass (and its release of stragglers held longer than the grace) every half second.
            WEBHOOK_SWEEP_INTERVAL_MS: '500',
            WEBHOOK_SWEEP_GRACE_S: '1',
          },
        },
      },
    );
    shop = await createMerchant('listener health shop');
    for (const role of ['viewer', 'operator'] as const)
      tokens[role] = (await runCli<{ token: string }>(['operator:create', '--name', `lh-${role}-${suffix}`, '--role', role])).token;
  });

  afterAll(async () => {
    await stack?.stop();
    await listener?.stop();
    await db?.end();
  });

  it('disables a listener failing for LISTENER_DISABLE_AFTER, holds its deliveries unattempted, and enable releases them in order', async () => {
    const from = await audit().lastEventId();
    const url = listener.url('/hook');
    const first = await sale(url);
    // Its retries keep failing (the schedule is compressed): past 2 s of failing, the listener is disabled.
    const disabled = await eventually(
      async () => {
        const row = await listenerRow();
        expect(row?.state).toBe('disabled');
        return row;
      },
      { timeoutMs: 60_000, intervalMs: 200 },
    );
    expect(disabled).toMatchObject({ disabled_by: 'auto', last_success_at: null });
    expect(disabled.consecutive_failures).toBeGreaterThan(1);
    expect(new Date(disabled.disabled_at).getTime() - new Date(disabled.failing_since).getTime()).toBeGreaterThanOrEqual(2_000);
    // The first delivery's next retry is held rather than attempted.
    await eventually(async () => expect((await deliveryOf(first)).status).toBe('held'), { timeoutMs: 60_000, intervalMs: 200 });

    const auto = await audit().eventsAfter(from, 'listener:disable');
    expect(auto.map((e) => [e.operator_name, e.outcome])).toEqual([
      ['system:notifier', 'attempted'],
      ['system:notifier', 'ok'],
    ]);
    expect(auto[1]).toMatchObject({ target: shop.merchantId, detail: { origin: origin(), by: 'auto', disableAfterS: 2 } });

    // The listener would answer now, but new deliveries to it are held, not attempted.
    failing = false;
    const heard = listener.at('/hook').length;
    const later = [await sale(url), await sale(url), await sale(url)];
    // The notifier creates a delivery after the sale's answer (outbox, queue): wait for each.
    for (const id of later) expect(await eventually(() => deliveryOf(id))).toMatchObject({ status: 'held', attempts: 0, origin: origin() });
    await sleep(1_500);
    expect(listener.at('/hook').length).toBe(heard);
    // The merchant's report reads transactions: unaffected.
    expect((await receiver('report', { transactionId: later[0] })).json).toMatchObject({ transactionId: later[0], status: '8' });

    const listed = await runCli<Array<Record<string, unknown>>>(['listener:list', '--merchant', shop.merchantId, '--state', 'disabled']);
    expect(listed).toEqual([
      expect.objectContaining({ merchantId: shop.merchantId, origin: origin(), state: 'disabled', disabledBy: 'auto', held: 4 }),
    ]);

    // A viewer may look but not act: refused before acting, and audited.
    const refused = await as(tokens.viewer, ['listener:enable', '--merchant', shop.merchantId, '--origin', origin()]);
    expect(refused.code).toBe(1);
    expect(refused.stderr).toMatch(/may not run listener:enable: it needs the operator role/);
    expect((await listenerRow()).state).toBe('disabled');

    // The release order: the deliveries' (created_at, id), which is the order the notifier created them in.
    const heldOrder: string[] = (
      await db.query(`SELECT transaction_id FROM deliveries WHERE merchant_id = $1 AND status = 'held' ORDER BY created_at, id`, [
        shop.internalId,
      ])
    ).rows.map((r) => r.transaction_id);
    expect([...heldOrder].sort()).toEqual([first, ...later].map((id) => id.toLowerCase()).sort());
    expect(heldOrder[0]).toBe(first.toLowerCase());

    const enabled = await runCli(['listener:enable', '--merchant', shop.merchantId, '--origin', origin()]);
    expect(enabled).toEqual({ merchantId: shop.merchantId, origin: origin(), state: 'enabled', released: 4 });
    // Under a loaded CI the four may take a while: a minute, and the error names what did come.
    const order = await listener.transactionsAfter('/hook', heard, 4, 60_000);
    expect(order).toEqual(heldOrder);
    for (const id of [first, ...later])
      await eventually(async () => expect((await deliveryOf(id)).status).toBe('succeeded'), { timeoutMs: 10_000 });
    expect(await listenerRow()).toMatchObject({ state: 'enabled', disabled_by: null, failing_since: null, consecutive_failures: 0 });

    const enables = await audit().eventsAfter(from, 'listener:enable');
    expect(enables.map((e) => [e.operator_name, e.outcome])).toEqual([
      [`lh-viewer-${suffix}`, 'refused'],
      ['test-admin', 'attempted'],
      ['test-admin', 'ok'],
    ]);
    expect(enables[2]).toMatchObject({ target: shop.merchantId, detail: { origin: origin() } });
  });

  it('an operator disables and enables a listener by hand, both audited; a viewer cannot disable', async () => {
    const from = await audit().lastEventId();
    const url = listener.url('/hook', '?by=hand');

    const viewer = await as(tokens.viewer, ['listener:disable', '--merchant', shop.merchantId, '--origin', origin()]);
    expect(viewer.code).toBe(1);
    expect(viewer.stderr).toMatch(/may not run listener:disable: it needs the operator role/);
    expect((await listenerRow()).state).toBe('enabled');

    // A whole delivery URL names its listener too (cut to its origin).
    const off = await as(tokens.operator, ['listener:disable', '--merchant', shop.merchantId, '--origin', url]);
    expect(off.code).toBe(0);
    expect(off.json).toEqual({ merchantId: shop.merchantId, origin: origin(), state: 'disabled' });
    const operatorId = (await db.query('SELECT id FROM operators WHERE name = $1', [`lh-operator-${suffix}`])).rows[0].id;
    expect(await listenerRow()).toMatchObject({ state: 'disabled', disabled_by: operatorId });
    const again = await as(tokens.operator, ['listener:disable', '--merchant', shop.merchantId, '--origin', origin()]);
    expect(again.code).toBe(1);
    expect(again.stderr).toMatch(/disabled already/);

    const heard = listener.at('/hook').length;
    const held = await sale(url);
    expect(await eventually(() => deliveryOf(held))).toMatchObject({ status: 'held', attempts: 0 });

    const on = await as(tokens.operator, ['listener:enable', '--merchant', shop.merchantId, '--origin', origin()]);
    expect(on.json).toMatchObject({ state: 'enabled', released: 1 });
    await eventually(
      () =>
        expect(
          listener
            .at('/hook')
            .slice(heard)
            .map((r) => r.transactionId),
        ).toEqual([held]),
      { timeoutMs: 30_000 },
    );
    const notDisabled = await as(tokens.operator, ['listener:enable', '--merchant', shop.merchantId, '--origin', origin()]);
    expect(notDisabled.code).toBe(1);
    expect(notDisabled.stderr).toMatch(/is not disabled/);

    const outcomes = async (action: string) =>
      (await audit().eventsAfter(from, action)).map((e) => [e.operator_name, e.outcome, e.target, e.detail.origin !== undefined]);
    expect(await outcomes('listener:disable')).toEqual([
      [`lh-viewer-${suffix}`, 'refused', shop.merchantId, true],
      [`lh-operator-${suffix}`, 'attempted', shop.merchantId, true],
      [`lh-operator-${suffix}`, 'ok', shop.merchantId, true],
      [`lh-operator-${suffix}`, 'attempted', shop.merchantId, true],
      [`lh-operator-${suffix}`, 'failed', shop.merchantId, true],
    ]);
    expect(await outcomes('listener:enable')).toEqual([
      [`lh-operator-${suffix}`, 'attempted', shop.merchantId, true],
      [`lh-operator-${suffix}`, 'ok', shop.merchantId, true],
      [`lh-operator-${suffix}`, 'attempted', shop.merchantId, true],
      [`lh-operator-${suffix}`, 'failed', shop.merchantId, true],
    ]);
  });

  it('the sweeper releases deliveries left held while their listener is enabled, oldest first; /metrics reports held ones', async () => {
    const url = listener.url('/hook', '?straggler=1');
    failing = false;
    const heard = listener.at('/hook').length;
    const ids = [await sale(url), await sale(url), await sale(url)];
    for (const id of ids) await eventually(async () => expect((await deliveryOf(id)).status).toBe('succeeded'), { timeoutMs: 30_000 });
    await eventually(() => expect(listener.at('/hook').length).toBe(heard + 3), { timeoutMs: 10_000 });

    // The state a retry racing an enable leaves, made directly: the listener disabled (so the sweeper
    // leaves them), its deliveries held, created in a known order (the last sale first).
    await db.query(
      `UPDATE listeners SET state = 'disabled', disabled_at = now(), disabled_by = 'auto' WHERE merchant_id = $1 AND origin = $2`,
      [shop.internalId, origin()],
    );
    const order = [ids[2], ids[0], ids[1]].map((id) => id.toLowerCase());
    for (const [i, id] of order.entries())
      await db.query(
        `UPDATE deliveries SET status = 'held', created_at = now() - make_interval(mins => 10 - $2), updated_at = now() - interval '1 minute'
         WHERE transaction_id = $1`,
        [id, i],
      );
    const replaysBefore = new Map<string, number>();
    for (const id of order) replaysBefore.set(id, (await deliveryOf(id)).replays);

    // Held behind a disabled listener: left alone, and counted by the notifier's gauges.
    await sleep(1_500);
    for (const id of order) expect((await deliveryOf(id)).status).toBe('held');
    const metrics = await (await fetch(`${stack.notifier.url}/metrics`)).text();
    expect(Number(/^webhook_held_deliveries(?:\{[^}]*\})? (\d+)/m.exec(metrics)?.[1])).toBeGreaterThanOrEqual(3);
    expect(Number(/^webhook_oldest_held_delivery_age_seconds(?:\{[^}]*\})? ([\d.e+]+)/m.exec(metrics)?.[1])).toBeGreaterThanOrEqual(9 * 60);

    // Enabled without a release (what the race leaves): the sweeper releases them, oldest first.
    await db.query(
      `UPDATE listeners SET state = 'enabled', disabled_at = NULL, disabled_by = NULL WHERE merchant_id = $1 AND origin = $2`,
      [shop.internalId, origin()],
    );
    const got = await listener.transactionsAfter('/hook', heard + 3, 3);
    expect(got).toEqual(order);
    for (const id of order) {
      const d = await eventually(
        async () => {
          const row = await deliveryOf(id);
          expect(row.status).toBe('succeeded');
          return row;
        },
        { timeoutMs: 10_000 },
      );
      expect(d.replays).toBe(replaysBefore.get(id)! + 1);
    }
    // The gauge counts every held delivery of the database: other suites of this lane may have left
    // some (a listener they disabled). This merchant's are all released, and the gauge says the rest.
    await eventually(
      async () => {
        const after = await (await fetch(`${stack.notifier.url}/metrics`)).text();
        const others = (
          await db.query<{ n: number }>(`SELECT count(*)::int AS n FROM deliveries WHERE status = 'held' AND merchant_id <> $1`, [
            shop.internalId,
          ])
        ).rows[0].n;
        expect(Number(/^webhook_held_deliveries(?:\{[^}]*\})? (\d+)$/m.exec(after)?.[1])).toBe(others);
      },
      { timeoutMs: 10_000 },
    );
    expect(
      (
        await db.query<{ n: number }>(`SELECT count(*)::int AS n FROM deliveries WHERE status = 'held' AND merchant_id = $1`, [
          shop.internalId,
        ])
      ).rows[0].n,
    ).toBe(0);
  });
});
