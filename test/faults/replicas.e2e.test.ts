import { expectReconciled, Json, MoneyDb, saleBody } from '../support/money';
import { LOCAL_LISTENER_ENV } from '../support/deliveries';
import { Listener } from '../support/listener';
import { samples } from '../support/metrics';
import {
  AppHandle,
  AppName,
  approvedRecipients,
  createMerchant,
  eventually,
  HttpResult,
  MerchantCredentials,
  post,
  startApp,
} from '../support/stack';
import { CANARY_CODES, SANDBOX_CARDS } from '../fixtures/cards';

jest.setTimeout(180_000);

const REPLICAS = 2;
/** The apps a sale goes through (the console takes no part in it). */
const SALE_APPS: readonly AppName[] = ['tokenizer', 'settlement', 'notifier', 'api'];
/** Eight Node processes booting at once on a shared machine: more than the usual 30 s. */
const READY_TIMEOUT_MS = 120_000;
/** Eight processes share the test Postgres (and its connection limit) with the other suites: small pools. */
const DB_POOL_SIZE = '5';
/** Fast local deliveries, with room for a loaded machine's slow answers before an attempt counts as timed out. */
const NOTIFIER_ENV = { ...LOCAL_LISTENER_ENV, WEBHOOK_TIMEOUT_MS: '10000' };
/** Operations of each kind (six kinds), all sent at once across the two apis. */
const PER_KIND = 8;

type Kind = 'card' | 'card+split' | 'token' | 'token+split' | 'authorize+capture' | 'authorize+cancel';
const KINDS: Kind[] = ['card', 'card+split', 'token', 'token+split', 'authorize+capture', 'authorize+cancel'];

const metricsOf = async (app: AppHandle): Promise<string> => (await fetch(`${app.url}/metrics`)).text();

/**
 * Issue 17, item 3: two of every worker and two apis, under concurrent sales (card and token,
 * with and without a split, authorizations captured or cancelled through the other api), with
 * webhooks to a real listener. Competing replicas must never act twice: one acquirer charge per
 * sale, one set of payables per capture, one delivery per event, and the operator's checks clean.
 */
/**
 * Queues of this suite's own (under the run's prefix, so the run's teardown still removes them):
 * the depth checks below count failed jobs, and the suites before it leave theirs in the run's
 * delivery queue.
 */
const QUEUE_PREFIX = `${process.env.QUEUE_PREFIX}rep`;

describe('two replicas of every app under load', () => {
  const listener = new Listener();
  const apps: AppHandle[] = [];
  const of = (name: AppName) => apps.filter((a) => a.name === name);
  let db: MoneyDb;
  let shop: MerchantCredentials;
  const recipients: string[] = [];
  let token: string;

  const receiver = (api: AppHandle, op: string, body: unknown): Promise<HttpResult> =>
    post(api.url, '/v1/receiver', {
      'transaction-request': { version: '1.0.0', verification: { merchantId: shop.merchantId, merchantKey: shop.merchantKey }, [op]: body },
    });

  beforeAll(async () => {
    await listener.start();
    db = await MoneyDb.connect();
    // Workers before the apis (as every launcher does), each replica with its own port and name.
    const boot = (name: AppName) =>
      Promise.all(
        Array.from({ length: REPLICAS }, (_, i) =>
          startApp(
            name,
            { REPLICA_NAME: `${name}-${i + 1}`, QUEUE_PREFIX, DB_POOL_SIZE, ...(name === 'notifier' ? NOTIFIER_ENV : {}) },
            { label: `${name}-${i + 1}`, readyTimeoutMs: READY_TIMEOUT_MS },
          ),
        ),
      );
    const [workers, merchant] = await Promise.all([
      Promise.all((['tokenizer', 'settlement', 'notifier'] as const).map(boot)),
      createMerchant('replicas'),
    ]);
    apps.push(...workers.flat());
    shop = merchant;
    apps.push(...(await boot('api')));
    recipients.push(...(await approvedRecipients(shop.merchantId, 2)));
    const added = await post(of('api')[0].url, '/v1/token/add', {
      'transaction-request': {
        version: '1.0.0',
        verification: { merchantId: shop.merchantId, merchantKey: shop.merchantKey },
        tokencard: {
          cardNumber: SANDBOX_CARDS[1],
          cardHolder: 'REPLICA TEST',
          cardExpirationDate: '203012',
          cardSecurityCode: CANARY_CODES[0],
        },
      },
    });
    expect(added.status).toBe(200);
    token = added.json.TokenCard;
  });

  afterAll(async () => {
    // The apis first, so no new work arrives while the workers drain.
    await Promise.all(of('api').map((a) => a.stop()));
    await Promise.all(apps.filter((a) => a.name !== 'api').map((a) => a.stop()));
    await db?.close();
    await listener.stop();
  });

  it('runs each replica as its own process, on its own port, named in its log', () => {
    expect(apps).toHaveLength(REPLICAS * SALE_APPS.length);
    expect(new Set(apps.map((a) => a.port)).size).toBe(apps.length);
    expect(new Set(apps.map((a) => a.pid)).size).toBe(apps.length);
    for (const name of SALE_APPS) {
      of(name).forEach((app, i) => expect(app.log()).toContain(`"replica":"${name}-${i + 1}"`));
    }
  });

  it('charges, settles and notifies each sale once, and ledger:verify and the acquirer reconciliation are clean', async () => {
    const split = () => [
      { recipient: recipients[0], percentage: 20 },
      { recipient: recipients[1], percentage: 10 },
    ];
    const bodyOf = (kind: Kind, amount: number): Json => {
      const body = saleBody(amount, listener.url('/hooks'));
      if (kind.startsWith('token')) {
        const { cardNumber: _n, cardSecurityCode: _c, cardExpirationDate: _e, cardHolder: _h, flag: _f, ...rest } = body.payment;
        body.payment = { ...rest, tokenCard: token };
      }
      if (kind.endsWith('+split')) body.payment.split = split();
      return body;
    };

    // The apis' own signals while the load runs: requests in flight and replies awaited.
    let sampling = true;
    const seen = { inFlight: 0, replyWaits: 0 };
    const sampler = (async () => {
      while (sampling) {
        for (const api of of('api')) {
          const text = await metricsOf(api);
          // The scrape itself is one request in flight: more means sales were in flight too.
          seen.inFlight = Math.max(seen.inFlight, samples(text, 'http_requests_in_flight')[0]?.value ?? 0);
          seen.replyWaits = Math.max(seen.replyWaits, ...samples(text, 'queue_reply_waits').map((s) => s.value));
        }
        await new Promise((r) => setTimeout(r, 20));
      }
    })();

    const started = Date.now();
    const apis = of('api');
    const runs = KINDS.flatMap((kind, k) =>
      Array.from({ length: PER_KIND }, async (_, i) => {
        const n = k * PER_KIND + i;
        const [first, second] = [apis[n % 2], apis[(n + 1) % 2]];
        const op = kind.startsWith('authorize') ? 'authorize' : 'sale';
        const res = await receiver(first, op, bodyOf(kind, 1_000 + n * 7));
        expect({ kind, status: res.status, code: res.json?.status }).toEqual({ kind, status: 200, code: op === 'sale' ? '8' : '3' });
        const id: string = res.json.transactionId;
        // The follow-up through the other api: replicas share nothing but Postgres and Redis.
        if (kind === 'authorize+capture') expect((await receiver(second, 'capture', { transactionId: id })).json?.status).toBe('8');
        if (kind === 'authorize+cancel') expect((await receiver(second, 'cancel', { transactionId: id })).json?.status).toBe('6');
        return { kind, id: id.toLowerCase() };
      }),
    );
    const sales = await Promise.all(runs);
    sampling = false;
    await sampler;
    process.stdout.write(
      `replicas: ${sales.length} sales (${PER_KIND} of each of ${KINDS.length} kinds) through 2 apis in ${Date.now() - started} ms; ` +
        `most requests in flight at one api ${seen.inFlight}, most reply waits ${seen.replyWaits}\n`,
    );
    expect(seen.inFlight).toBeGreaterThan(1);
    expect(seen.replyWaits).toBeGreaterThan(0);
    const ids = sales.map((s) => s.id);

    // One transaction per sale sent, and one first (non-repeated) authorization at the acquirer each.
    const [{ n: transactions }] = await db.query<{ n: string }>('SELECT count(*) AS n FROM transactions WHERE merchant_id = $1', [
      shop.internalId,
    ]);
    expect(Number(transactions)).toBe(sales.length);
    const charges = await db.query<{ key: string; n: string }>(
      `SELECT operation_key AS key, count(*) AS n FROM sandbox_calls WHERE kind = 'authorize' AND NOT repeat AND operation_key = ANY($1) GROUP BY operation_key`,
      [ids.map((id) => `${id}-authorize`)],
    );
    expect(charges).toHaveLength(sales.length);
    expect(charges.filter((c) => Number(c.n) !== 1)).toEqual([]);

    // The acquirer's books equal the record for each, with the captures and cancels made once.
    for (const sale of sales) {
      await db.settled(sale.id);
      const r = await db.recorded(sale.id);
      const books = await db.books(r.tid);
      expect({ kind: sale.kind, captured: books.captured, cancelled: books.cancelled }).toEqual({
        kind: sale.kind,
        captured: r.captured,
        cancelled: r.cancelled,
      });
      expect(books.calls).toHaveLength(sale.kind === 'authorize+capture' || sale.kind === 'authorize+cancel' ? 1 : 0);
    }

    // Payables once per capture: one capture row per party and instalment, adding up to what was captured.
    const dupes = await db.query<Json>(
      `SELECT transaction_id, recipient_id, instalment, count(*) AS n FROM payables WHERE kind = 'capture' AND transaction_id = ANY($1::uuid[])
       GROUP BY transaction_id, recipient_id, instalment HAVING count(*) > 1`,
      [ids],
    );
    expect(dupes).toEqual([]);
    const captured = await db.query<{ id: string; gross: string; captured: string; parties: string }>(
      `SELECT t.id, COALESCE(sum(p.gross), 0) AS gross, t.captured_amount AS captured, count(p.id) AS parties
       FROM transactions t LEFT JOIN payables p ON p.transaction_id = t.id AND p.kind = 'capture'
       WHERE t.id = ANY($1::uuid[]) GROUP BY t.id`,
      [ids],
    );
    for (const row of captured) {
      const sale = sales.find((s) => s.id === row.id)!;
      expect({ id: row.id, gross: Number(row.gross) }).toEqual({ id: row.id, gross: Number(row.captured) });
      if (sale.kind !== 'authorize+cancel') expect(Number(row.parties)).toBe(sale.kind.endsWith('+split') ? 3 : 1);
    }

    // Each status change delivered once: one delivery per event, succeeded by exactly one attempt
    // (an attempt the notifier gave up on in time, then retried, is the at-least-once contract,
    // not a race; two replicas sending one delivery would show two successful attempts), and the
    // listener saw each webhook-id once per recorded attempt, never more.
    const [{ n: events }] = await db.query<{ n: string }>(
      `SELECT count(*) AS n FROM outbox WHERE event = 'transaction.status_changed' AND aggregate_id = ANY($1::uuid[])`,
      [ids],
    );
    const deliveries = await eventually(
      async () => {
        const rows = await db.query<{ id: string; status: string; attempts: string; ok: string }>(
          `SELECT d.id, d.status, count(a.id) AS attempts, count(a.id) FILTER (WHERE a.http_status BETWEEN 200 AND 299) AS ok
           FROM deliveries d LEFT JOIN delivery_attempts a ON a.delivery_id = d.id WHERE d.merchant_id = $1 GROUP BY d.id`,
          [shop.internalId],
        );
        expect(rows.filter((d) => d.status === 'succeeded')).toHaveLength(Number(events));
        return rows;
      },
      { timeoutMs: 30_000 },
    );
    expect(deliveries).toHaveLength(Number(events));
    expect(deliveries.filter((d) => Number(d.ok) !== 1)).toEqual([]);
    const hooks = listener.at('/hooks');
    const receipts = new Map<string, number>();
    for (const h of hooks) receipts.set(String(h.headers['webhook-id']), (receipts.get(String(h.headers['webhook-id'])) ?? 0) + 1);
    expect(new Set(receipts.keys())).toEqual(new Set(deliveries.map((d) => d.id)));
    expect(deliveries.filter((d) => receipts.get(d.id) !== Number(d.attempts))).toEqual([]);
    const retried = deliveries.filter((d) => Number(d.attempts) > 1).length;
    process.stdout.write(`replicas: ${deliveries.length} deliveries, ${retried} needed more than one attempt\n`);
    // At least one webhook per sale (its first status).
    expect(new Set(hooks.map((h) => h.transactionId?.toLowerCase())).size).toBe(sales.length);

    // The operator's checks, as an operator runs them.
    expect(await expectReconciled(shop.merchantId)).toBe(sales.length);

    // Both replicas of each worker took part.
    for (const name of ['tokenizer', 'settlement', 'notifier'] as const) {
      const perReplica = await Promise.all(
        of(name).map(async (app) => samples(await metricsOf(app), 'jobs_processed_total').reduce((a, s) => a + s.value, 0)),
      );
      process.stdout.write(`replicas: ${name} jobs per replica ${perReplica.join(', ')}\n`);
      for (const n of perReplica) expect(n).toBeGreaterThan(0);
    }
  });

  it("exports each worker's queue depth per queue it consumes, and the notifier's delivery queue", async () => {
    const expected: Record<string, string[]> = {
      tokenizer: ['token.add', 'token.retrieve', 'card.authorize', 'card.capture', 'card.cancel'],
      settlement: ['transaction.captured', 'transaction.cancelled'],
      notifier: ['transaction.status_changed', 'webhook.deliver', 'webhook.recover'],
    };
    for (const app of apps.filter((a) => a.name !== 'api')) {
      const text = await metricsOf(app);
      for (const metric of [
        'queue_waiting_jobs',
        'queue_active_jobs',
        'queue_delayed_jobs',
        'queue_failed_jobs',
        'queue_oldest_waiting_age_seconds',
      ]) {
        const queues = samples(text, metric).map((s) => s.labels.queue);
        expect({ app: app.label, metric, queues: queues.sort() }).toEqual({
          app: app.label,
          metric,
          queues: [...expected[app.name]].sort(),
        });
      }
      // The load is over: nothing waits, nothing failed for good.
      for (const s of samples(text, 'queue_waiting_jobs'))
        expect({ app: app.label, ...s }).toEqual({ app: app.label, labels: s.labels, value: 0 });
      for (const s of samples(text, 'queue_failed_jobs'))
        expect({ app: app.label, ...s }).toEqual({ app: app.label, labels: s.labels, value: 0 });
      expect(samples(text, 'queue_depth_up')[0]?.value).toBe(1);
    }
  });
});
