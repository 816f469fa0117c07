import { createMerchant, eventually, HttpResult, MerchantCredentials, Stack, startStack } from '../support/stack';
import { expectReconciled, MoneyDb, receiverOf, saleBody } from '../support/money';

jest.setTimeout(300_000);

/**
 * The tokenizer SIGKILLed while 100 captures and cancels are in flight on 20 transactions (each
 * acquirer call takes 300 ms, so the kill lands before, during and after acquirer calls). After a
 * restart, every claim is settled with the acquirer, nothing stays held, the merchant's retries
 * with the same Idempotency-Key complete each operation exactly once, and the books agree.
 */
describe('money operations survive a tokenizer crash', () => {
  let stack: Stack;
  let shop: MerchantCredentials;
  let db: MoneyDb;

  beforeAll(async () => {
    stack = await startStack(
      {
        CLAIM_STALE_AFTER_S: '3',
        ACQUIRER_TIMEOUT_MS: '700',
        SALE_RECONCILE_INTERVAL_MS: '500',
        REPLY_TIMEOUT_MS: '6000',
        OPERATION_WAIT_MS: '4000',
      },
      { envFor: { tokenizer: { SANDBOX_FOLLOW_UP_LATENCY_MS: '300' } } },
    );
    shop = await createMerchant('money crash shop');
    db = await MoneyDb.connect();
  });

  afterAll(async () => {
    await db?.close();
    await stack?.stop();
  });

  it('SIGKILL with 100 operations in flight: every claim resolved, every operation applied at most once, books agree', async () => {
    const receiver = receiverOf(stack.baseUrl, shop);
    // 10 authorizations (a capture of 6 000, then cancels) and 10 sales (cancels only), 10 000 each.
    const auths = await Promise.all(Array.from({ length: 10 }, () => receiver('authorize', saleBody(10_000))));
    const sales = await Promise.all(Array.from({ length: 10 }, () => receiver('sale', saleBody(10_000))));
    const ops: { id: string; op: 'capture' | 'cancel'; amount: number; key: string }[] = [];
    for (const [i, a] of auths.entries()) {
      ops.push({ id: a.json.transactionId, op: 'capture', amount: 6_000, key: `crash-a${i}-capture` });
      for (let j = 0; j < 4; j++) ops.push({ id: a.json.transactionId, op: 'cancel', amount: 500, key: `crash-a${i}-cancel-${j}` });
    }
    for (const [i, s] of sales.entries())
      for (let j = 0; j < 5; j++) ops.push({ id: s.json.transactionId, op: 'cancel', amount: 700, key: `crash-s${i}-cancel-${j}` });
    expect(ops).toHaveLength(100);

    const send = (o: (typeof ops)[number]): Promise<HttpResult> =>
      receiver(o.op, { transactionId: o.id, amount: o.amount }, { 'idempotency-key': o.key }).catch((e) => ({
        status: 0,
        headers: {},
        json: undefined,
        text: String(e),
      }));
    const inFlight = ops.map(send);
    await eventually(
      async () => {
        const [{ n }] = await db.query<{ n: string }>(`SELECT count(*) AS n FROM transaction_operations WHERE state = 'pending'`);
        if (Number(n) < 5) throw new Error('not enough operations in flight yet');
      },
      { timeoutMs: 10_000, intervalMs: 20 },
    );
    await stack.restart('tokenizer', 'SIGKILL');
    const first = await Promise.all(inFlight);
    const statuses = first.map((r) => r.status);
    process.stdout.write(`answers around the crash: ${JSON.stringify(countBy(statuses))}\n`);

    // Every claim the dead worker held is settled with the acquirer: nothing stays in flight.
    const ids = [...new Set(ops.map((o) => o.id))];
    await eventually(
      async () => {
        const [{ n }] = await db.query<{ n: string }>(
          `SELECT count(*) AS n FROM transactions WHERE id = ANY($1) AND pending_operation_id IS NOT NULL`,
          [ids.map((i) => i.toLowerCase())],
        );
        expect(Number(n)).toBe(0);
      },
      { timeoutMs: 30_000, intervalMs: 250 },
    );

    // The merchant retries what did not get a definite answer, with the same Idempotency-Key.
    const final = [...first];
    for (let round = 0; round < 5 && final.some(unsettled); round++) {
      await Promise.all(
        final.map(async (r, i) => {
          if (unsettled(r)) final[i] = await send(ops[i]);
        }),
      );
    }
    expect(final.filter(unsettled)).toEqual([]);

    for (const id of ids) {
      const r = await db.recorded(id);
      const books = await db.books(r.tid);
      const mine = ops.map((o, i) => ({ ...o, res: final[i] })).filter((o) => o.id === id);
      const ok = mine.filter((o) => o.res.status === 200);
      // Exactly the operations finally answered 200 are in the record, and in the acquirer's books, once each.
      expect(r.held).toBe(false);
      const isSale = sales.some((s) => s.json.transactionId === id);
      expect(r.captured).toBe(isSale ? 10_000 : ok.filter((o) => o.op === 'capture').reduce((a, o) => a + o.amount, 0));
      expect(r.cancelled).toBe(ok.filter((o) => o.op === 'cancel').reduce((a, o) => a + o.amount, 0));
      expect({ captured: books.captured, cancelled: books.cancelled }).toEqual({ captured: r.captured, cancelled: r.cancelled });
      expect(books.calls).toHaveLength(ok.filter((o) => o.op === 'capture' || o.op === 'cancel').length);
      expect(r.events['transaction.cancelled'] ?? 0).toBe(ok.filter((o) => o.op === 'cancel').length);
    }
    expect(await expectReconciled(shop.merchantId)).toBe(20);
  });
});

/** Not a definite answer: the request may or may not have been applied, so the merchant retries. */
function unsettled(r: HttpResult): boolean {
  return (
    r.status === 0 ||
    r.status === 503 ||
    (r.status === 409 && (r.json?.result?.error?.code === '038' || r.json?.result?.error?.code === '409'))
  );
}

function countBy(xs: number[]): Record<string, number> {
  return xs.reduce<Record<string, number>>((a, x) => ({ ...a, [x]: (a[x] ?? 0) + 1 }), {});
}
