import { request } from 'node:http';
import { randomUUID } from 'node:crypto';
import { Queue } from 'bullmq';
import { queueOn } from '@app/messaging';
import { testRedis } from '../support/redis';
import { Client } from 'pg';
import { Webhook } from 'standardwebhooks';
import { DELIVERY_QUEUE } from '@app/webhooks/delivery';
import { createMerchant, eventually, MerchantCredentials, post, runCli, Stack, startStack } from '../support/stack';
import { CANARY_CODES, SANDBOX_CARDS } from '../fixtures/cards';
import { Listener, Received } from '../support/listener';
import { receiverOf } from '../support/money';

jest.setTimeout(300_000);

// eslint-disable-next-line @typescript-eslint/no-explicit-any
type Json = Record<string, any>;

/**
 * The notifier end to end (docs/merchants/webhooks.md, DESIGN.md 4): signed Standard Webhooks deliveries to a real
 * listener, the retry schedule (compressed), 410, exhaustion and replay, SSRF refusal, the attempt
 * log, a SIGKILLed notifier, and the operator endpoints.
 */
describe('webhook delivery to urlReturn', () => {
  let stack: Stack;
  let shop: MerchantCredentials;
  let listener: Listener;
  let db: Client;
  let ref = 0;
  const admin = { authorization: `Bearer ${process.env.GATEWAY_OPERATOR_TOKEN}` };

  const receiver = (op: string, body: unknown, headers: Record<string, string> = {}) =>
    post(
      stack.baseUrl,
      '/v1/receiver',
      {
        'transaction-request': {
          version: '1.0.0',
          verification: { merchantId: shop.merchantId, merchantKey: shop.merchantKey },
          [op]: body,
        },
      },
      headers,
    );

  const sale = (urlReturn: string, digit = 1, amount = 5_000) => ({
    order: { reference: `WH-${++ref}`, totalAmount: amount },
    payment: {
      acquirer: 26,
      method: 1,
      amount,
      currency: '986',
      country: 'BRA',
      numberOfPayments: 1,
      cardHolder: 'MARIA SILVA',
      cardNumber: SANDBOX_CARDS[digit],
      cardSecurityCode: CANARY_CODES[3],
      cardExpirationDate: '203012',
    },
    urlReturn,
    fraud: 'false',
  });

  const verify = (r: Received, secret = shop.webhookSecret) =>
    new Webhook(secret).verify(r.body, r.headers as Record<string, string>) as Json;
  const deliveryOf = async (transactionId: string, statusVersion = 2) =>
    (
      await db.query('SELECT * FROM deliveries WHERE transaction_id = $1 AND status_version = $2', [
        transactionId.toLowerCase(),
        statusVersion,
      ])
    ).rows[0];
  const attemptsOf = async (deliveryId: string) =>
    (await db.query('SELECT * FROM delivery_attempts WHERE delivery_id = $1 ORDER BY id', [deliveryId])).rows;
  /** A request with the target exactly as written (fetch would normalize it). */
  const rawStatus = (target: string) =>
    new Promise<number>((resolve, reject) => {
      const u = new URL(stack.consoleUrl);
      const req = request({ host: u.hostname, port: u.port, path: target, method: 'GET' }, (res) => {
        res.resume();
        resolve(res.statusCode ?? 0);
      });
      req.on('error', reject);
      req.end();
    });
  const get = async (path: string, headers: Record<string, string> = {}) => {
    const res = await fetch(`${stack.consoleUrl}${path}`, { headers });
    const text = await res.text();
    return {
      status: res.status,
      text,
      json: (() => {
        try {
          return JSON.parse(text);
        } catch {
          return undefined;
        }
      })(),
    };
  };

  beforeAll(async () => {
    db = new Client({ connectionString: process.env.DATABASE_URL });
    await db.connect();
    listener = await new Listener().start();
    stack = await startStack(
      {},
      {
        withConsole: true,
        envFor: {
          notifier: {
            WEBHOOK_SCHEDULE_SCALE: '0.0001',
            // 127.0.0.3: another destination than 127.0.0.1 (127.0.0.2 stays refused, for the guard's test).
            WEBHOOK_ALLOW_NETWORKS: '127.0.0.1/32,127.0.0.3/32',
            WEBHOOK_TIMEOUT_MS: '3000',
            WEBHOOK_PER_DESTINATION: '16',
            WEBHOOK_SWEEP_INTERVAL_MS: '500',
            WEBHOOK_SWEEP_GRACE_S: '1',
          },
        },
      },
    );
    shop = await createMerchant('webhook shop');
  });

  afterAll(async () => {
    await stack?.stop();
    await listener?.stop();
    await db?.end();
  });

  it('delivers approved, declined, captured and cancelled events, signed, with TransactionID and increasing statusVersion', async () => {
    const url = listener.url('/events', '?shop=1');
    const approved = await receiver('authorize', sale(url, 1));
    const declined = await receiver('sale', sale(url, 2));
    const id = approved.json.transactionId;
    await receiver('capture', { transactionId: id });
    await receiver('cancel', { transactionId: id });
    const got = await eventually(() => {
      const mine = listener.at('/events').filter((r) => r.transactionId === id);
      expect(mine).toHaveLength(3);
      expect(listener.at('/events').filter((r) => r.transactionId === declined.json.transactionId)).toHaveLength(1);
      return mine;
    });
    for (const r of listener.at('/events')) {
      expect(verify(r)).toMatchObject({ type: 'transaction.status_changed' });
      expect(r.query.get('shop')).toBe('1');
      expect(r.headers['webhook-id']).toMatch(/^[0-9a-f-]{36}$/);
      expect(r.json.data.transactionId).toBe(r.transactionId);
      expect(r.body).not.toContain(SANDBOX_CARDS[1]);
    }
    const byVersion = got.map((r) => [Number(r.json.data.statusVersion), r.json.data.status]).sort((a, b) => a[0] - b[0]);
    expect(byVersion).toEqual([
      [2, '3'],
      [3, '8'],
      [4, '6'],
    ]);
    const decline = listener.at('/events').find((r) => r.transactionId === declined.json.transactionId)!;
    expect(decline.json.data).toMatchObject({ status: '4', statusVersion: '2', processor: { returnCode: '05' } });
  });

  it('runs the whole pipeline: HTTP sale with a split → tokenizer → settlement payables → notifier → listener', async () => {
    const { recipientId } = await runCli<{ recipientId: string }>([
      'recipient:create',
      '--merchant',
      shop.merchantId,
      '--name',
      'pipeline seller',
    ]);
    await runCli(['recipient:approve', '--recipient', recipientId]);
    const body: Json = sale(listener.url('/pipeline'), 1, 20_000);
    body.payment.split = [{ recipient: recipientId, percentage: '25', charge_processing_fee: 'true' }];
    const res = await receiver('sale', body);
    expect(res.json).toMatchObject({ status: '8', split: [{ recipient: recipientId, grossAmount: '5000', mode: 'PRORATA' }] });
    const heard = await eventually(() => {
      const got = listener.at('/pipeline').find((r) => r.transactionId === res.json.transactionId);
      expect(got).toBeDefined();
      return got!;
    });
    expect(verify(heard)).toMatchObject({ data: { status: '8', split: [{ recipient: recipientId, grossAmount: '5000' }] } });
    const payables = await eventually(async () => {
      const rows = (
        await db.query('SELECT recipient_id, gross::int FROM payables WHERE transaction_id = $1 ORDER BY id', [
          res.json.transactionId.toLowerCase(),
        ])
      ).rows;
      expect(rows).toHaveLength(2);
      return rows;
    });
    expect(payables).toEqual([
      { recipient_id: null, gross: 15_000 },
      { recipient_id: recipientId, gross: 5_000 },
    ]);
  });

  it('retries a listener that answers 500 three times: delivered on the 4th attempt, four attempts recorded', async () => {
    listener.on('/flaky', (_r, nth) => ({ status: nth <= 3 ? 500 : 200 }));
    const res = await receiver('sale', sale(listener.url('/flaky')));
    const d = await eventually(async () => {
      const row = await deliveryOf(res.json.transactionId);
      expect(row?.status).toBe('succeeded');
      return row;
    });
    const attempts = await attemptsOf(d.id);
    expect(attempts.map((a) => [a.attempt, a.http_status, a.error_class])).toEqual([
      [1, 500, 'http_status'],
      [2, 500, 'http_status'],
      [3, 500, 'http_status'],
      [4, 200, null],
    ]);
    expect(attempts[0].response_body).toBe('answer 500');
    expect(new Set(listener.at('/flaky').map((r) => r.headers['webhook-id']))).toEqual(new Set([d.id]));
    // Every attempt is signed afresh over the same stored bytes.
    expect(new Set(listener.at('/flaky').map((r) => r.body)).size).toBe(1);
    for (const r of listener.at('/flaky')) verify(r);
  });

  it('keeps retrying while the listener is down and delivers once it is up', async () => {
    const later = new Listener();
    const probe = await new Listener().start();
    const port = probe.port; // a free port: nothing listens there until `later` starts
    await probe.stop();
    const res = await receiver('sale', sale(`http://127.0.0.1:${port}/late`));
    await eventually(async () => expect((await deliveryOf(res.json.transactionId))?.attempts).toBeGreaterThanOrEqual(3), {
      timeoutMs: 30_000,
    });
    await later.start(port);
    try {
      const d = await eventually(
        async () => {
          const row = await deliveryOf(res.json.transactionId);
          expect(row.status).toBe('succeeded');
          return row;
        },
        { timeoutMs: 60_000 },
      );
      const attempts = await attemptsOf(d.id);
      expect(attempts.slice(0, -1).every((a) => a.error_class === 'connect')).toBe(true);
      expect(attempts.at(-1)).toMatchObject({ http_status: 200, error_class: null });
      expect(later.at('/late')).toHaveLength(1);
    } finally {
      await later.stop();
    }
  });

  it('delivers a pending delivery whose job was lost (Redis lost its data): the sweeper queues it again', async () => {
    // Ahead of it, more overdue deliveries than one sweep looks at, each still scheduled (a
    // listener's backlog): the sweeper must get past them to the one whose job is gone.
    const backlog = Array.from({ length: 450 }, () => randomUUID());
    const redis = testRedis({ maxRetriesPerRequest: null });
    const deliveryQueue = new Queue(DELIVERY_QUEUE, queueOn(redis, process.env.QUEUE_PREFIX!, DELIVERY_QUEUE));
    // Jobs first: a sweep between the two steps would otherwise find the rows without them.
    await deliveryQueue.addBulk(
      backlog.map((id) => ({ name: DELIVERY_QUEUE, data: { deliveryId: id, host: '127.0.0.1:9' }, opts: { jobId: id, delay: 3_600_000 } })),
    );
    await db.query(
      `INSERT INTO deliveries (id, merchant_id, transaction_id, status_version, event, url, body, next_attempt_at, created_at)
       SELECT b.id, $2, gen_random_uuid(), 2, 'transaction.status_changed', 'http://127.0.0.1:9/backlog', '{}', now() - interval '1 hour', now() - interval '2 hours'
       FROM unnest($1::uuid[]) AS b (id)`,
      [backlog, shop.internalId],
    );
    try {
      await deliversLostDelivery();
    } finally {
      // Rows first: with the jobs gone first, a sweep (every 500 ms) in between found the rows
      // overdue with no job, queued them again and recorded an attempt the DELETE then tripped on.
      await db.query('DELETE FROM deliveries WHERE id = ANY($1)', [backlog]);
      await Promise.all(backlog.map((id) => deliveryQueue.remove(id)));
      await deliveryQueue.close();
      redis.disconnect();
    }
  });

  async function deliversLostDelivery(): Promise<void> {
    const res = await receiver('sale', sale(listener.url('/lost')));
    const first = await eventually(() => {
      const got = listener.at('/lost');
      expect(got).toHaveLength(1);
      return got[0];
    });
    // As if the first attempt had failed and its retry job had vanished with Redis' data. Only once
    // the first attempt is recorded: recorded after this update, it would undo it.
    const d = await eventually(async () => {
      const row = await deliveryOf(res.json.transactionId);
      expect(row.status).toBe('succeeded');
      return row;
    });
    await db.query(`UPDATE deliveries SET status = 'pending', next_attempt_at = now() - interval '10 seconds' WHERE id = $1`, [d.id]);
    const again = await eventually(
      () => {
        const got = listener.at('/lost');
        expect(got).toHaveLength(2);
        return got[1];
      },
      { timeoutMs: 15_000 },
    );
    expect(again.headers['webhook-id']).toBe(first.headers['webhook-id']);
    await eventually(async () => expect((await deliveryOf(res.json.transactionId)).status).toBe('succeeded'));
  }

  it('stops at 410 Gone', async () => {
    listener.on('/gone', () => ({ status: 410 }));
    const res = await receiver('sale', sale(listener.url('/gone')));
    const d = await eventually(async () => {
      const row = await deliveryOf(res.json.transactionId);
      expect(row?.status).toBe('failed');
      return row;
    });
    await new Promise((r) => setTimeout(r, 3_000));
    expect(await attemptsOf(d.id)).toHaveLength(1);
    expect(listener.at('/gone')).toHaveLength(1);
  });

  it('honours Retry-After within the schedule', async () => {
    listener.on('/busy', (_r, nth) => (nth === 1 ? { status: 503, headers: { 'retry-after': '2' } } : { status: 200 }));
    const res = await receiver('sale', sale(listener.url('/busy')));
    const d = await eventually(
      async () => {
        const row = await deliveryOf(res.json.transactionId);
        expect(row?.status).toBe('succeeded');
        return row;
      },
      { timeoutMs: 20_000 },
    );
    const [first, second] = await attemptsOf(d.id);
    // The schedule alone would retry after 0.5 ms (5 s × 0.0001); the listener asked for 2 s.
    expect(new Date(second.started_at).getTime() - new Date(first.started_at).getTime()).toBeGreaterThanOrEqual(1_900);
  });

  it('refuses a private address without allowlist: blocked, recorded, never connected', async () => {
    const internal = await new Listener('127.0.0.2').start();
    try {
      const res = await receiver('sale', sale(internal.url('/internal')));
      const d = await eventually(async () => {
        const row = await deliveryOf(res.json.transactionId);
        expect(row?.status).toBe('blocked');
        return row;
      });
      expect((await attemptsOf(d.id)).map((a) => a.error_class)).toEqual(['ssrf_blocked']);
      expect(internal.connections).toBe(0);
      const listed = await get(`/admin/deliveries?status=blocked&merchant=${shop.merchantId}`, admin);
      expect(listed.json.deliveries.map((x: Json) => x.id)).toContain(d.id);
    } finally {
      await internal.stop();
    }
  });

  it('an exhausted delivery is failed, listed for the operator, and replayed with the same webhook-id', async () => {
    let up = false;
    listener.on('/down', () => ({ status: up ? 200 : 500 }));
    const res = await receiver('sale', sale(listener.url('/down')));
    const d = await eventually(
      async () => {
        const row = await deliveryOf(res.json.transactionId);
        expect(row?.status).toBe('failed');
        return row;
      },
      { timeoutMs: 90_000, intervalMs: 500 },
    );
    const attempts = await attemptsOf(d.id);
    expect(attempts).toHaveLength(10);
    // Every attempt the listener answered is a call it recorded. On a loaded machine an attempt can
    // also end before its request was read (a first-byte timeout, a kept-alive socket the listener
    // had just closed): the notifier records it with no HTTP status and the transport's error, and
    // the listener may not have seen it.
    const answered = attempts.filter((a) => a.http_status === 500).length;
    expect(answered).toBeGreaterThanOrEqual(1);
    const unanswered = attempts.filter((a) => a.http_status !== 500);
    expect(unanswered.map((a) => [a.http_status, typeof a.error_class])).toEqual(unanswered.map(() => [null, 'string']));

    const unauth = await get(`/admin/deliveries?status=failed&merchant=${shop.merchantId}`);
    expect(unauth.status).toBe(401);
    expect(unauth.text).not.toContain(d.id);
    const listed = await get(`/admin/deliveries?status=failed&merchant=${shop.merchantId}`, admin);
    expect(listed.status).toBe(200);
    expect(listed.json.deliveries.map((x: Json) => x.id)).toContain(d.id);
    const twice = await get(`/admin/deliveries?merchant=${shop.merchantId}&merchant=${shop.merchantId}`, admin);
    expect([twice.status, twice.json.result.error.parameter]).toEqual([400, 'merchant']);
    const cli = await runCli<Json[]>(['webhooks:list', '--merchant', shop.merchantId, '--status', 'failed']);
    expect(cli.map((x) => x.id)).toContain(d.id);

    // Read last before the replay, so that a late request of an attempt that ended unanswered is counted here.
    const before = listener.at('/down').length;
    expect(before).toBeGreaterThanOrEqual(answered);
    expect(before).toBeLessThanOrEqual(10);
    up = true;
    const replay = await fetch(`${stack.consoleUrl}/admin/deliveries/${d.id}/replay`, { method: 'POST', headers: admin });
    expect(replay.status).toBe(202);
    await eventually(async () => expect((await deliveryOf(res.json.transactionId)).status).toBe('succeeded'));
    const calls = listener.at('/down');
    expect(calls).toHaveLength(before + 1);
    expect(new Set(calls.map((r) => r.headers['webhook-id']))).toEqual(new Set([d.id]));
    const again = await fetch(`${stack.consoleUrl}/admin/deliveries/${d.id}/replay`, { method: 'POST', headers: admin });
    expect(again.status).toBe(409);
  });

  it('webhooks:replay from the CLI, one delivery or every failed one of a merchant since a time', async () => {
    let up = false;
    listener.on('/cli', () => ({ status: up ? 200 : 410 }));
    const since = new Date(Date.now() - 1000).toISOString();
    const ids: string[] = [];
    for (let i = 0; i < 3; i++) ids.push((await receiver('sale', sale(listener.url('/cli')))).json.transactionId);
    const rows = await eventually(async () => {
      const all = await Promise.all(ids.map((id) => deliveryOf(id)));
      expect(all.map((r) => r?.status)).toEqual(['failed', 'failed', 'failed']);
      return all;
    });
    up = true;
    expect(await runCli(['webhooks:replay', '--delivery', rows[0].id])).toEqual({ deliveryId: rows[0].id, replay: 'queued' });
    await eventually(async () => expect((await deliveryOf(ids[0])).status).toBe('succeeded'));
    const bulk = await runCli<Json>(['webhooks:replay', '--merchant', shop.merchantId, '--since', since]);
    expect(bulk.queued).toBeGreaterThanOrEqual(2);
    await eventually(async () =>
      expect((await Promise.all(ids.map((id) => deliveryOf(id)))).map((r) => r.status)).toEqual(['succeeded', 'succeeded', 'succeeded']),
    );
  });

  it('after merchant:rotate-webhook-secret both secrets verify during the grace period', async () => {
    const rotated = await runCli<Json>(['merchant:rotate-webhook-secret', '--merchant', shop.merchantId]);
    expect(rotated.webhookSecret).toMatch(/^whsec_/);
    // The notifier caches secrets for 5 s.
    await new Promise((r) => setTimeout(r, 5_500));
    const res = await receiver('sale', sale(listener.url('/rotated')));
    const r = await eventually(() => {
      const got = listener.at('/rotated').find((x) => x.transactionId === res.json.transactionId);
      expect(got).toBeDefined();
      return got!;
    });
    expect(String(r.headers['webhook-signature']).split(' ')).toHaveLength(2);
    expect(verify(r, rotated.webhookSecret)).toBeDefined();
    expect(verify(r, shop.webhookSecret)).toBeDefined();
    shop = { ...shop, webhookSecret: rotated.webhookSecret };
  });

  it("one slow listener gets at most 16 attempts at once, spends no attempt waiting, and does not hold up another merchant's", async () => {
    const slow = await new Listener().start();
    // Another merchant's listener on another host: a port of the same host shares the slow one's
    // destination cap, and a listener of the same merchant its merchant cap (both 16).
    const beside = await new Listener('127.0.0.3').start();
    const neighbour = await createMerchant('webhook shop beside');
    try {
      slow.on('/busy', () => ({ status: 200, delayMs: 1_000 }));
      const slowIds: string[] = [];
      for (let batch = 0; batch < 4; batch++) {
        const res = await Promise.all(Array.from({ length: 20 }, () => receiver('sale', sale(slow.url('/busy')))));
        slowIds.push(...res.map((x) => x.json.transactionId));
      }
      // 80 deliveries at 16 × 1 s take 5 s; another merchant's listener is served meanwhile.
      const fast = await Promise.all(
        Array.from({ length: 10 }, () => receiverOf(stack.baseUrl, neighbour)('sale', sale(beside.url('/beside-busy')))),
      );
      expect(fast.map((r) => r.json.status)).toEqual(Array(10).fill('8'));
      await eventually(() => expect(new Set(beside.at('/beside-busy').map((r) => r.transactionId)).size).toBe(fast.length), {
        intervalMs: 20,
        timeoutMs: 3_000,
      });
      expect(new Set(slow.at('/busy').map((r) => r.transactionId)).size).toBeLessThan(slowIds.length);
      await eventually(
        async () => {
          const rows = await db.query(`SELECT status, attempts FROM deliveries WHERE transaction_id = ANY($1)`, [
            slowIds.map((i) => i.toLowerCase()),
          ]);
          expect(rows.rows).toHaveLength(slowIds.length);
          // Waiting for a slot, in process or in the queue, never counts as an attempt.
          expect(rows.rows.filter((r) => r.status !== 'succeeded' || r.attempts !== 1)).toEqual([]);
        },
        { timeoutMs: 60_000, intervalMs: 250 },
      );
      expect(slow.maxOpen).toBeLessThanOrEqual(16);
      expect(slow.maxOpen).toBeGreaterThan(1);
    } finally {
      await slow.stop();
      await beside.stop();
    }
  });

  it('SIGKILL with 200 deliveries in flight: every event is delivered after restart, duplicates keep their webhook-id', async () => {
    listener.on('/slow', () => ({ status: 200, delayMs: 300 }));
    const ids: string[] = [];
    for (let batch = 0; batch < 10; batch++) {
      const res = await Promise.all(Array.from({ length: 20 }, () => receiver('sale', sale(listener.url('/slow')))));
      ids.push(...res.map((x) => x.json.transactionId));
    }
    await eventually(() => expect(listener.at('/slow').length).toBeGreaterThan(10), { intervalMs: 20 });
    await stack.notifier.kill();
    await stack.restart('notifier', 'SIGKILL');
    await eventually(
      () => {
        const seen = new Set(listener.at('/slow').map((r) => r.transactionId));
        expect(ids.filter((id) => !seen.has(id))).toEqual([]);
      },
      { timeoutMs: 120_000, intervalMs: 500 },
    );
    const idsByTransaction = new Map<string, Set<string>>();
    for (const r of listener.at('/slow')) {
      const set = idsByTransaction.get(r.transactionId!) ?? new Set<string>();
      set.add(String(r.headers['webhook-id']));
      idsByTransaction.set(r.transactionId!, set);
    }
    expect([...idsByTransaction.values()].filter((s) => s.size !== 1)).toEqual([]);
    await eventually(
      async () => {
        const open = await db.query(`SELECT count(*)::int AS n FROM deliveries WHERE transaction_id = ANY($1) AND status <> 'succeeded'`, [
          ids.map((i) => i.toLowerCase()),
        ]);
        expect(open.rows[0].n).toBe(0);
        // An attempt cut by the kill after the listener had it is recorded when its job comes back
        // from the stalled check (lockDuration + stalledInterval: up to ~20 s), and is sent again.
      },
      { timeoutMs: 60_000, intervalMs: 500 },
    );
  });

  describe('operator endpoints', () => {
    it('refuse every request without the token, or with a wrong one', async () => {
      for (const path of ['/admin/deliveries', '/admin/queues', '/admin/queues/api/queues']) {
        expect((await get(path)).status).toBe(401);
        expect((await get(path, { authorization: 'Bearer not-the-token-at-all' })).status).toBe(401);
      }
      expect(
        (await fetch(`${stack.consoleUrl}/admin/deliveries/00000000-0000-4000-8000-000000000000/replay`, { method: 'POST' })).status,
      ).toBe(401);
      // Other spellings of the prefix reach the same routes, so they need the token too.
      for (const path of ['/%61dmin/deliveries', '/adm%69n/queues', '/%61dmin/queues/api/queues', 'http://gateway/admin/deliveries']) {
        expect(await rawStatus(path)).toBe(401);
      }
    });

    it('allow only retries among the dashboard actions', async () => {
      const pause = await fetch(`${stack.consoleUrl}/admin/queues/api/queues/webhook.deliver/pause`, {
        method: 'PUT',
        headers: admin,
      });
      expect(pause.status).toBe(405);
      const add = await fetch(`${stack.consoleUrl}/admin/queues/api/queues/webhook.deliver/add`, {
        method: 'POST',
        headers: { ...admin, 'content-type': 'application/json' },
        body: '{"name":"x","data":{}}',
      });
      expect(add.status).toBe(405);
      const retry = await fetch(`${stack.consoleUrl}/admin/queues/api/queues/webhook.deliver/retry/failed`, {
        method: 'PUT',
        headers: admin,
      });
      expect(retry.status).toBe(200);
    });

    it('lists the events given up on without their payloads, and replays them on request', async () => {
      const listed = await get('/admin/events/dead?event=transaction.captured', admin);
      expect(listed.status).toBe(200);
      expect(Array.isArray(listed.json.dead)).toBe(true);
      const bad = await get('/admin/events/dead?event=card.authorize', admin);
      expect(bad.status).toBe(400);
      expect(JSON.stringify(bad.json)).toMatch(/event must be one of transaction\.status_changed/);
      const replay = await fetch(`${stack.consoleUrl}/admin/events/dead/replay?event=transaction.captured`, {
        method: 'POST',
        headers: admin,
      });
      expect(replay.status).toBe(202);
      expect(await replay.json()).toEqual({ event: 'transaction.captured', replayed: listed.json.dead.length });
      expect((await fetch(`${stack.consoleUrl}/admin/events/dead/replay?event=transaction.captured`, { method: 'POST' })).status).toBe(401);
    });

    it('bull-board shows every queue with the token, card-bearing job data redacted', async () => {
      const page = await get('/admin/queues', admin);
      expect(page.status).toBe(200);
      expect(page.text).toMatch(/<html/i);
      const api = await get('/admin/queues/api/queues?activeQueue=card.authorize&status=completed', admin);
      expect(api.status).toBe(200);
      const names = api.json.queues.map((q: Json) => q.name);
      expect(names).toEqual(expect.arrayContaining(['token.add', 'card.authorize', 'webhook.deliver', 'webhook.recover']));
      // Events travel on streams, not queues: the dashboard has none of them.
      expect(names).not.toContain('transaction.captured');
      expect(api.text).not.toContain('sealedCard');
      const delivery = api.json.queues.find((q: Json) => q.name === 'webhook.deliver');
      expect(delivery.allowRetries).toBe(true);
      expect(api.json.queues.find((q: Json) => q.name === 'card.authorize').allowRetries).toBe(false);
    });

    it('reports delivery metrics', async () => {
      const metrics = await (await fetch(`${stack.notifier.url}/metrics`)).text();
      // (Counted since the notifier's restart in the SIGKILL test: its 200 deliveries at least.)
      expect(metrics).toMatch(/webhook_deliveries_total\{outcome="succeeded"[^}]*\} [1-9]\d*/);
      expect(metrics).toMatch(/webhook_attempt_duration_seconds_count\{[^}]*error_class="none"[^}]*\} [1-9]/);
      expect(metrics).toMatch(/webhook_oldest_pending_delivery_age_seconds\{[^}]*\} \d/);
    });
  });
});
