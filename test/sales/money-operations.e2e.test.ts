import { randomUUID } from 'node:crypto';
import { lastValueFrom } from 'rxjs';
import { Patterns } from '@app/contracts';
import { BullMqClient } from '@app/messaging';
import { createMerchant, eventually, MerchantCredentials, runCli, runCliRaw, Stack, startStack } from '../support/stack';
import { expectReconciled, Json, MoneyDb, receiverOf, saleBody } from '../support/money';
import { testRedisTarget } from '../support/redis';

jest.setTimeout(300_000);

const RUNS = Number(process.env.MONEY_RACE_RUNS ?? 20);

/**
 * Captures, cancels and chargebacks racing on one transaction, as a merchant's retries and an
 * operator's tools send them: the acquirer hears only of operations the gateway records, every
 * 200 is applied exactly once, every refusal is not, and the books agree.
 */
describe('money operations under concurrency', () => {
  let stack: Stack;
  let shop: MerchantCredentials;
  let db: MoneyDb;
  let receiver: ReturnType<typeof receiverOf>;

  beforeAll(async () => {
    // Claims of a stopped worker are settled within seconds here (production: a minute).
    stack = await startStack({
      CLAIM_STALE_AFTER_S: '5',
      ACQUIRER_TIMEOUT_MS: '1000',
      SALE_RECONCILE_INTERVAL_MS: '500',
      OPERATION_WAIT_MS: '2500',
    });
    shop = await createMerchant('money race shop');
    receiver = receiverOf(stack.baseUrl, shop);
    db = await MoneyDb.connect();
  });

  afterAll(async () => {
    await db?.close();
    await stack?.stop();
  });

  async function start(op: 'sale' | 'authorize', amount: number): Promise<string> {
    const res = await receiver(op, saleBody(amount));
    expect(res.json).toMatchObject({ status: op === 'sale' ? '8' : '3' });
    return res.json.transactionId;
  }

  /** The record and the acquirer agree, nothing is held, and each applied change has its events. */
  async function expectAgreement(id: string, applied: { captures: number; cancels: number }): Promise<void> {
    const r = await db.recorded(id);
    const books = await db.books(r.tid);
    expect(r.held).toBe(false);
    expect({ captured: books.captured, cancelled: books.cancelled }).toEqual({ captured: r.captured, cancelled: r.cancelled });
    // Acquirer calls that act are exactly the applied operations.
    expect(books.calls.filter((c) => c.kind === 'capture')).toHaveLength(applied.captures);
    expect(books.calls.filter((c) => c.kind === 'cancel')).toHaveLength(applied.cancels);
    expect(r.operations.applied ?? 0).toBe(applied.captures + applied.cancels);
    // One status-change webhook per status change (the first was the authorization), one settle event per operation.
    expect(r.events['transaction.status_changed']).toBe(r.statusVersion - 1);
    expect(r.events['transaction.cancelled'] ?? 0).toBe(applied.cancels);
  }

  it(`capture racing cancel on an authorization (${RUNS} runs): both orders, never an unrecorded acquirer call`, async () => {
    const orders = new Set<string>();
    for (let run = 0; run < RUNS; run++) {
      const id = await start('authorize', 10_000);
      const [capture, cancel] = await Promise.all([
        receiver('capture', { transactionId: id, amount: 300 }),
        receiver('cancel', { transactionId: id, amount: 300 }),
      ]);
      const r = await db.recorded(id);
      if (cancel.status === 200 && capture.status === 200) {
        // Captured 300 first, then that capture cancelled in full.
        orders.add('capture, cancel');
        expect(capture.json).toMatchObject({ status: '8', processor: { capturedAmount: '300', cancelledAmount: '0' } });
        expect(cancel.json).toMatchObject({ status: '6', processor: { capturedAmount: '300', cancelledAmount: '300' } });
        expect(r).toMatchObject({ status: 6, captured: 300, cancelled: 300 });
        await expectAgreement(id, { captures: 1, cancels: 1 });
      } else {
        // The authorization partly cancelled first: a capture of what is left is refused as cancelled.
        orders.add('cancel, capture refused');
        expect(cancel.json).toMatchObject({ status: '12', processor: { capturedAmount: '0', cancelledAmount: '300' } });
        expect(capture.status).toBe(409);
        expect(capture.json.result.error.code).toBe('034');
        expect(r).toMatchObject({ status: 12, captured: 0, cancelled: 300 });
        await expectAgreement(id, { captures: 0, cancels: 1 });
      }
    }
    // Not a requirement, but both orders should show up over the runs; log what was seen.
    process.stdout.write(`capture/cancel orders seen: ${[...orders].join(' | ')}\n`);
  });

  it(`30 concurrent partial cancels that all fit all succeed, once each (${RUNS} runs)`, async () => {
    for (let run = 0; run < RUNS; run++) {
      const id = await start('sale', 10_000);
      // 30 operations on one transaction run one at a time: on a loaded machine the last ones can
      // wait past OPERATION_WAIT_MS and get 409 038 (busy, nothing applied, safe to retry). A
      // merchant retries those; every cancel must then succeed, once.
      let busyRetries = 0;
      const cancelUntilTaken = async () => {
        for (let attempt = 1; ; attempt++) {
          const r = await receiver('cancel', { transactionId: id, amount: 300 });
          if (r.status !== 409 || r.json.result.error.code !== '038' || attempt === 10) return r;
          busyRetries++;
        }
      };
      const results = await Promise.all(Array.from({ length: 30 }, cancelUntilTaken));
      expect(results.map((r) => r.status)).toEqual(Array(30).fill(200));
      if (busyRetries) process.stdout.write(`30 partial cancels: ${busyRetries} busy answers retried\n`);
      // Each answer is the state its own cancel left: 300, 600, … 9 000, each once.
      const seen = results.map((r) => Number(r.json.processor.cancelledAmount)).sort((a, b) => a - b);
      expect(seen).toEqual(Array.from({ length: 30 }, (_, i) => 300 * (i + 1)));
      expect(await db.recorded(id)).toMatchObject({ status: 12, cancelled: 9_000, statusVersion: 32 });
      await expectAgreement(id, { captures: 0, cancels: 30 });
    }
  });

  it(`4 concurrent cancels of 3 000 on 10 000: three succeed, the fourth is refused by what is left (${RUNS} runs)`, async () => {
    for (let run = 0; run < RUNS; run++) {
      const id = await start('sale', 10_000);
      const results = await Promise.all(Array.from({ length: 4 }, () => receiver('cancel', { transactionId: id, amount: 3_000 })));
      const ok = results.filter((r) => r.status === 200);
      const refused = results.filter((r) => r.status !== 200);
      expect(ok).toHaveLength(3);
      expect(refused).toHaveLength(1);
      expect(refused[0].status).toBe(400);
      expect(refused[0].json.result.error).toMatchObject({ code: '904', parameter: 'amount' });
      expect(refused[0].json.result.error.details).toContain('1000 cents');
      expect(await db.recorded(id)).toMatchObject({ status: 12, cancelled: 9_000 });
      await expectAgreement(id, { captures: 0, cancels: 3 });
    }
  });

  it(`a chargeback and a cancel can never both take the same cents back (${Math.ceil(RUNS / 2)} runs)`, async () => {
    for (let run = 0; run < Math.ceil(RUNS / 2); run++) {
      const id = await start('sale', 10_000);
      const [cancel, chargeback] = await Promise.all([
        receiver('cancel', { transactionId: id, amount: 6_000 }),
        runCliRaw<Json>(['chargeback:record', '--transaction', id, '--amount', '6000']),
      ]);
      const r = await db.recorded(id);
      // Exactly one of the two fits; the other is refused by what the first took.
      expect([cancel.status === 200, chargeback.code === 0].filter(Boolean)).toHaveLength(1);
      if (cancel.status === 200) {
        expect(cancel.json.result).toBeUndefined();
        expect(chargeback.stderr).toContain('4000 cents');
        expect(r).toMatchObject({ cancelled: 6_000, chargedBack: 0 });
        await expectAgreement(id, { captures: 0, cancels: 1 });
      } else {
        expect(cancel.status).toBe(400);
        expect(cancel.json.result.error.details).toContain('4000 cents');
        expect(r).toMatchObject({ cancelled: 0, chargedBack: 6_000 });
        await expectAgreement(id, { captures: 0, cancels: 0 });
      }
      await db.settled(id);
    }
  });

  it('a flood of operations on one transaction neither starves another transaction nor applies what it refused', async () => {
    const [crowded, quiet] = [await start('sale', 100_000), await start('sale', 10_000)];
    const flood = Promise.all(Array.from({ length: 60 }, () => receiver('cancel', { transactionId: crowded, amount: 1 })));
    await new Promise((r) => setTimeout(r, 20));
    const startedAt = Date.now();
    const other = await receiver('cancel', { transactionId: quiet, amount: 100 });
    const tookMs = Date.now() - startedAt;
    expect(other.json.processor.cancelledAmount).toBe('100');
    const answers = await flood;
    // Past the queue a transaction may have in a process (OPERATION_QUEUE_PER_TRANSACTION, 32), 038 at once.
    expect(answers.every((a) => a.status === 200 || (a.status === 409 && a.json.result.error.code === '038'))).toBe(true);
    const ok = answers.filter((a) => a.status === 200).length;
    expect(ok).toBeGreaterThanOrEqual(33);
    expect(await db.recorded(crowded)).toMatchObject({ cancelled: ok });
    await expectAgreement(crowded, { captures: 0, cancels: ok });
    expect(tookMs).toBeLessThan(2_000);
  });

  it('a retry with the same Idempotency-Key after a lost answer completes the same operation instead of repeating it', async () => {
    const id = await start('sale', 10_000);
    const first = await receiver('cancel', { transactionId: id, amount: 1_000 }, { 'idempotency-key': `retry-${id}` });
    expect(first.json.processor.cancelledAmount).toBe('1000');
    // The answer was lost on the way (the stored answer is gone): the merchant sends it again.
    await db.query(`DELETE FROM idempotency_keys WHERE key = $1`, [`retry-${id}`]);
    const again = await receiver('cancel', { transactionId: id, amount: 1_000 }, { 'idempotency-key': `retry-${id}` });
    expect(again.status).toBe(200);
    expect(again.json.processor.cancelledAmount).toBe('1000');
    await expectAgreement(id, { captures: 0, cancels: 1 });
  });

  it('an Idempotency-Key used again, once its replay record is gone, for another request is that other request', async () => {
    const [a, b] = [await start('sale', 10_000), await start('sale', 10_000)];
    expect(
      (await receiver('cancel', { transactionId: a, amount: 700 }, { 'idempotency-key': `reused-${a}` })).json.processor.cancelledAmount,
    ).toBe('700');
    await db.query(`DELETE FROM idempotency_keys WHERE key = $1`, [`reused-${a}`]);
    const other = await receiver('cancel', { transactionId: b, amount: 900 }, { 'idempotency-key': `reused-${a}` });
    expect(other.json).toMatchObject({ transactionId: b, processor: { cancelledAmount: '900' } });
    await expectAgreement(a, { captures: 0, cancels: 1 });
    await expectAgreement(b, { captures: 0, cancels: 1 });
  });

  describe('claims a stopped worker left behind', () => {
    /** A claim as a worker SIGKILLed between its claim and its outcome leaves it. */
    async function leaveClaim(id: string, kind: 'capture' | 'cancel', amount: number, request = randomUUID()): Promise<string> {
      const op = randomUUID();
      await db.query(
        `WITH t AS (UPDATE transactions SET pending_operation_id = $2, pending_kind = $3, pending_amount = $4 WHERE id = $1 RETURNING id, merchant_id)
         INSERT INTO transaction_operations (id, request_id, transaction_id, merchant_id, kind, amount, operation_key) SELECT $2, $5, id, merchant_id, $3, $4, $3 || '-' || $2 FROM t`,
        [id.toLowerCase(), op, kind, amount, request],
      );
      return `${kind}-${op}`;
    }

    it('the dead worker\'s job delivered again too late to start: the claim\'s outcome (503 while open), never 038 "nothing was done"', async () => {
      const id = await start('authorize', 10_000);
      const request = randomUUID();
      const key = await leaveClaim(id, 'capture', 4_000, request);
      // The job as BullMQ hands it to another tokenizer once the dead one's lock lapses: the same
      // operation id, and the API's wait (notAfter) already too short for an acquirer call.
      const client = new BullMqClient({ connection: testRedisTarget(), prefix: process.env.QUEUE_PREFIX!, replyTimeoutMs: 10_000 });
      await client.connect();
      const redelivered = () =>
        lastValueFrom(
          client.send(Patterns.CardCapture, {
            merchantId: shop.internalId,
            transactionId: id,
            amount: 4_000,
            operationId: request,
            notAfter: Date.now(),
          }),
        );
      try {
        await expect(redelivered()).rejects.toMatchObject({ payload: { kind: 'unavailable' } });
        // The acquirer ran the capture before the worker died; the reconciler records it.
        const tid = (await db.recorded(id)).tid;
        await db.query(`INSERT INTO sandbox_calls (operation_key, kind, amount, tid, result) VALUES ($1, 'capture', 4000, $2, $3)`, [
          key,
          tid,
          JSON.stringify({ outcome: 'approved', returnCode: '00', returnMessage: 'Captured', tid, nsu: '3' }),
        ]);
        await eventually(async () => expect(await db.recorded(id)).toMatchObject({ held: false, captured: 4_000 }), { timeoutMs: 15_000 });
        // Delivered once more, it is answered with what was applied, and nothing is applied again.
        await expect(redelivered()).resolves.toMatchObject({ capturedAmount: 4_000 });
        await expectAgreement(id, { captures: 1, cancels: 0 });
      } finally {
        await client.close();
      }
    });

    it('a claim the acquirer never heard of: waiters get 409 038 (safe to retry), then the reconciler releases it and fences the key', async () => {
      const id = await start('sale', 10_000);
      const key = await leaveClaim(id, 'cancel', 2_000);
      const waited = await receiver('cancel', { transactionId: id, amount: 500 });
      expect(waited.status).toBe(409);
      expect(waited.json.result.error.code).toBe('038');
      await eventually(async () => expect((await db.recorded(id)).held).toBe(false), { timeoutMs: 15_000 });
      // The key is closed at the acquirer: its call, arriving late, acts on nothing.
      const [fence] = await db.query<Json>(`SELECT result FROM sandbox_calls WHERE operation_key = $1 AND NOT repeat`, [key]);
      expect(fence.result).toMatchObject({ outcome: 'declined', returnCode: 'VD' });
      expect((await db.recorded(id)).operations).toMatchObject({ voided: 1 });
      const retried = await receiver('cancel', { transactionId: id, amount: 500 });
      expect(retried.json).toMatchObject({ status: '12', processor: { cancelledAmount: '500' } });
      await expectAgreement(id, { captures: 0, cancels: 1 });
    });

    it('a claim whose acquirer call went through: the reconciler records it, with its webhook and settlement', async () => {
      const id = await start('authorize', 10_000);
      const key = await leaveClaim(id, 'capture', 4_000);
      const tid = (await db.recorded(id)).tid;
      // The acquirer ran the capture, then the worker died before recording it.
      await db.query(`INSERT INTO sandbox_calls (operation_key, kind, amount, tid, result) VALUES ($1, 'capture', 4000, $2, $3)`, [
        key,
        tid,
        JSON.stringify({ outcome: 'approved', returnCode: '00', returnMessage: 'Captured', tid, nsu: '1' }),
      ]);
      await eventually(async () => expect(await db.recorded(id)).toMatchObject({ held: false, status: 8, captured: 4_000 }), {
        timeoutMs: 15_000,
      });
      const r = await db.recorded(id);
      expect(r.events).toMatchObject({ 'transaction.captured': 1, 'transaction.status_changed': 2 });
      await expectAgreement(id, { captures: 1, cancels: 0 });
      await db.settled(id);
    });
  });

  it('acquirer:reconcile and ledger:verify find nothing to report after all of the above', async () => {
    expect(await expectReconciled(shop.merchantId)).toBeGreaterThan(3 * RUNS);
  });

  it('acquirer:reconcile reports a capture the gateway did not record, and exits 1', async () => {
    const tampered = await createMerchant('money race tampered');
    const auth = await receiverOf(stack.baseUrl, tampered)('authorize', saleBody(5_000));
    const id: string = auth.json.transactionId;
    const tid = (await db.recorded(id)).tid;
    // The gateway last changed the transaction before --since; only the acquirer acted after it.
    await new Promise((r) => setTimeout(r, 50));
    const since = new Date().toISOString();
    await db.query(`INSERT INTO sandbox_calls (operation_key, kind, amount, tid, result) VALUES ($1, 'capture', 300, $2, $3)`, [
      `capture-${randomUUID()}`,
      tid,
      JSON.stringify({ outcome: 'approved', returnCode: '00', returnMessage: 'Captured', tid, nsu: '2' }),
    ]);
    const run = await runCliRaw<Json>(['acquirer:reconcile', '--merchant', tampered.merchantId, '--since', since]);
    expect(run.code).toBe(1);
    expect(run.json?.differences).toEqual([
      { transactionId: id.toUpperCase(), merchantId: tampered.merchantId, check: 'captured', gateway: 0, acquirer: 300 },
    ]);
    await expect(runCli(['acquirer:reconcile', '--merchant', 'not-a-merchant'])).rejects.toThrow(
      '--merchant: no merchant "not-a-merchant"',
    );
    // The UUID still names it (merchants integrated before public ids); the output names it by public id.
    const byUuid = await runCliRaw<Json>(['acquirer:reconcile', '--merchant', tampered.internalId.toUpperCase(), '--since', since]);
    expect(byUuid.json?.differences).toEqual(run.json?.differences);
  });

  it('after retention:run prunes the sandbox books of old sales, acquirer:reconcile is still clean (it compares what the books still hold)', async () => {
    const aged = await createMerchant('money retention');
    const sale = receiverOf(stack.baseUrl, aged);
    const old = (await sale('authorize', saleBody(4_000))).json.transactionId as string;
    const recent = (await sale('authorize', saleBody(6_000))).json.transactionId as string;
    // The first sale as if made 100 days ago (RETENTION_SANDBOX_CALLS is 90 days): its transaction and its acquirer calls.
    const oldTid = (await db.recorded(old)).tid;
    await db.query(
      `UPDATE transactions SET created_at = now() - interval '100 days', updated_at = now() - interval '100 days' WHERE id = $1`,
      [old],
    );
    await db.query(`UPDATE sandbox_calls SET created_at = now() - interval '100 days' WHERE tid = $1`, [oldTid]);
    const calls = async (tid: string) =>
      (await db.query<{ n: number }>(`SELECT count(*)::int AS n FROM sandbox_calls WHERE tid = $1`, [tid]))[0].n;
    const dry = await runCli<Json>(['retention:run', '--table', 'sandbox_calls', '--dry-run']);
    expect(dry.tables[0]).toMatchObject({ table: 'sandbox_calls' });
    expect(dry.tables[0].rows).toBeGreaterThanOrEqual(1);
    expect(await calls(oldTid)).toBeGreaterThan(0);
    const run = await runCli<Json>(['retention:run', '--table', 'sandbox_calls']);
    expect(run).toMatchObject({ dryRun: false, tables: [{ table: 'sandbox_calls' }] });
    expect(run.tables[0].rows).toBeGreaterThanOrEqual(1);
    expect(await calls(oldTid)).toBe(0);
    expect(await calls((await db.recorded(recent)).tid)).toBeGreaterThan(0);
    // The recent sale is compared and agrees; the old one is past the books and not compared.
    expect(await expectReconciled(aged.merchantId)).toBe(1);
  });
});
