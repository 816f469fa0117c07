import { Client } from 'pg';
import { lastValueFrom } from 'rxjs';
import { Events } from '@app/contracts';
import { BullMqClient, eventStreamKeys, streamDepth, withJobId } from '@app/messaging';
import { testRedis, testRedisTarget } from '../support/redis';
import { computeSplit, payableCells, processingFee } from '@app/split';
import {
  approvedRecipients,
  createMerchant,
  eventually,
  MerchantCredentials,
  post,
  runCli,
  runCliRaw,
  Stack,
  startStack,
} from '../support/stack';
import { CANARY_CARDS, CANARY_CODES, SANDBOX_CARDS } from '../fixtures/cards';

jest.setTimeout(240_000);

// eslint-disable-next-line @typescript-eslint/no-explicit-any
type Json = Record<string, any>;

const VISA_1X = { ratePpm: 29_900, fixed: 0 };
const MASTERCARD_1X = { ratePpm: 31_900, fixed: 30 };

/**
 * Split settlement end to end (docs/merchants/split.md): validation at the API before any charge, payables
 * written by the settlement worker on capture and matching the engine, reversals on cancel,
 * chargebacks, idempotent re-delivery, a killed worker, and ledger:verify at zero difference.
 */
describe('split settlement', () => {
  let stack: Stack;
  let shop: MerchantCredentials;
  let other: MerchantCredentials;
  let db: Client;
  const r: string[] = []; // approved recipients of shop
  let pending: string; // a recipient of shop not approved yet
  let foreign: string; // an approved recipient of another merchant
  let ref = 0;

  const receiver = (op: string, body: unknown, m = shop) =>
    post(stack.baseUrl, '/v1/receiver', {
      'transaction-request': { version: '1.0.0', verification: { merchantId: m.merchantId, merchantKey: m.merchantKey }, [op]: body },
    });

  const sale = (amount: number, split: unknown, over: Json = {}) => ({
    order: { reference: `SPLIT-${++ref}`, totalAmount: amount },
    payment: {
      acquirer: 26,
      method: 1,
      amount,
      currency: '986',
      country: 'BRA',
      numberOfPayments: 1,
      cardHolder: 'MARIA SILVA',
      cardNumber: SANDBOX_CARDS[1],
      cardSecurityCode: CANARY_CODES[2],
      cardExpirationDate: '203012',
      split,
      ...over,
    },
    fraud: 'false',
  });

  const payablesOf = async (id: string) =>
    (
      await db.query(
        `SELECT COALESCE(recipient_id::text, 'merchant') AS party, kind, instalment, due_date::text AS due, gross::int, fee::int, net::int FROM payables WHERE transaction_id = $1 ORDER BY id`,
        [id.toLowerCase()],
      )
    ).rows;
  const settled = (id: string) =>
    eventually(
      async () => {
        const rows = await payablesOf(id);
        expect(rows.length).toBeGreaterThan(0);
        return rows;
      },
      { timeoutMs: 20_000 },
    );

  beforeAll(async () => {
    db = new Client({ connectionString: process.env.DATABASE_URL });
    await db.connect();
    stack = await startStack();
    shop = await createMerchant('marketplace');
    other = await createMerchant('other marketplace');
    r.push(...(await approvedRecipients(shop.merchantId, 4)));
    pending = (await runCli<{ recipientId: string }>(['recipient:create', '--merchant', shop.merchantId, '--name', 'not yet'])).recipientId;
    foreign = (await runCli<{ recipientId: string }>(['recipient:create', '--merchant', other.merchantId, '--name', 'elsewhere']))
      .recipientId;
    await runCli(['recipient:approve', '--recipient', foreign]);
    await runCli([
      'fees:set',
      '--merchant',
      shop.merchantId,
      '--kind',
      'credit',
      '--brand',
      'visa',
      '--instalments',
      '1',
      '--rate',
      '2.99',
      '--fixed',
      '0',
    ]);
    await runCli([
      'fees:set',
      '--merchant',
      shop.merchantId,
      '--kind',
      'credit',
      '--brand',
      'mastercard',
      '--instalments',
      '1',
      '--rate',
      '3.19',
      '--fixed',
      '30',
    ]);
    await runCli([
      'fees:set',
      '--merchant',
      shop.merchantId,
      '--kind',
      'credit',
      '--brand',
      'visa',
      '--instalments',
      '7',
      '--rate',
      '4.5',
      '--fixed',
      '10',
    ]);
  });

  afterAll(async () => {
    await stack?.stop();
    await db?.end();
  });

  describe('validation before any charge (docs/merchants/split.md 3)', () => {
    const entry = (i: number, over: Json = {}) => ({ recipient: r[i], percentage: '10', ...over });
    const cases: [string, string, string, () => unknown, number][] = [
      ['recipient missing', 'SPLIT_RECIPIENT_REQUIRED', 'payment.split[0].recipient', () => [{ percentage: 10 }], 10_000],
      [
        'recipient unknown',
        'SPLIT_RECIPIENT_NOT_FOUND',
        'payment.split[1].recipient',
        () => [entry(0), { recipient: '00000000-0000-4000-8000-000000000000', percentage: 5 }],
        10_000,
      ],
      [
        "another merchant's recipient",
        'SPLIT_RECIPIENT_NOT_FOUND',
        'payment.split[0].recipient',
        () => [{ recipient: foreign, percentage: 5 }],
        10_000,
      ],
      [
        'recipient not approved',
        'SPLIT_RECIPIENT_NOT_ACTIVE',
        'payment.split[0].recipient',
        () => [{ recipient: pending, percentage: 5 }],
        10_000,
      ],
      [
        'recipient is the merchant (its public id)',
        'SPLIT_RECIPIENT_IS_MERCHANT',
        'payment.split[0].recipient',
        () => [{ recipient: shop.merchantId, percentage: 5 }],
        10_000,
      ],
      [
        'recipient is the merchant (its UUID, upper case)',
        'SPLIT_RECIPIENT_IS_MERCHANT',
        'payment.split[1].recipient',
        () => [entry(0), { recipient: shop.internalId.toUpperCase(), percentage: 5 }],
        10_000,
      ],
      [
        "another merchant's public id",
        'SPLIT_RECIPIENT_NOT_FOUND',
        'payment.split[0].recipient',
        () => [{ recipient: other.merchantId, percentage: 5 }],
        10_000,
      ],
      ['neither percentage nor amount', 'SPLIT_VALUE_REQUIRED', 'payment.split[0]', () => [{ recipient: r[0] }], 10_000],
      [
        'both percentage and amount',
        'SPLIT_VALUE_AMBIGUOUS',
        'payment.split[2]',
        () => [entry(0), entry(1), entry(2, { amount: 100 })],
        10_000,
      ],
      [
        'percentage over 100',
        'SPLIT_PERCENTAGE_OUT_OF_RANGE',
        'payment.split[0].percentage',
        () => [entry(0, { percentage: '100.5' })],
        10_000,
      ],
      ['percentage under 1', 'SPLIT_PERCENTAGE_OUT_OF_RANGE', 'payment.split[0].percentage', () => [entry(0, { percentage: 0.5 })], 10_000],
      [
        'percentage with 3 decimals',
        'SPLIT_PERCENTAGE_PRECISION',
        'payment.split[1].percentage',
        () => [entry(0), entry(1, { percentage: '12.345' })],
        10_000,
      ],
      ['amount of 0', 'SPLIT_AMOUNT_OUT_OF_RANGE', 'payment.split[0].amount', () => [{ recipient: r[0], amount: 0 }], 10_000],
      [
        'amount over the sale',
        'SPLIT_AMOUNT_OUT_OF_RANGE',
        'payment.split[0].amount',
        () => [{ recipient: r[0], amount: '10001' }],
        10_000,
      ],
      ['an empty split', 'SPLIT_EMPTY', 'payment.split', () => [], 10_000],
      [
        'eleven entries',
        'SPLIT_TOO_MANY_ENTRIES',
        'payment.split',
        () => Array.from({ length: 11 }, (_, i) => ({ recipient: r[i % 4], percentage: 1 })),
        10_000,
      ],
      ['a recipient twice', 'SPLIT_RECIPIENT_DUPLICATED', 'payment.split[2].recipient', () => [entry(0), entry(1), entry(0)], 10_000],
      [
        'percentages over 100 in sum',
        'SPLIT_PERCENTAGE_SUM_EXCEEDED',
        'payment.split',
        () => [entry(0, { percentage: 60 }), entry(1, { percentage: '40.01' })],
        10_000,
      ],
      [
        'two full fee payers',
        'SPLIT_MULTIPLE_FULL_FEE_PAYERS',
        'payment.split',
        () => [entry(0, { charge_recipient_processing_fee: true }), entry(1, { charge_recipient_processing_fee: 'true' })],
        10_000,
      ],
      [
        'full and pro rata fee payers',
        'SPLIT_FULL_AND_PRORATA_FEE_CONFLICT',
        'payment.split',
        () => [entry(0, { charge_recipient_processing_fee: true }), entry(1, { charge_processing_fee: true })],
        10_000,
      ],
      [
        'amounts over the sale in sum',
        'SPLIT_GROSS_EXCEEDED',
        'payment.split',
        () => [
          { recipient: r[0], amount: 6000 },
          { recipient: r[1], amount: 5000 },
        ],
        10_000,
      ],
      [
        'a full fee payer whose slice is under the fee',
        'SPLIT_FEE_EXCEEDS_SHARE',
        'payment.split[0]',
        () => [{ recipient: r[0], percentage: 1, charge_recipient_processing_fee: true }],
        10_000,
      ],
      [
        'a merchant residual under its fee share',
        'SPLIT_MERCHANT_NET_NEGATIVE',
        'payment.split',
        () => [{ recipient: r[0], percentage: 100 }],
        10_000,
      ],
    ];
    it.each(cases)('%s → 400 %s at %s', async (_name, code, parameter, split, amount) => {
      const body = sale(amount, split());
      const res = await receiver('sale', body);
      expect(res.status).toBe(400);
      expect(res.json.result.error.code).toBe('920');
      expect(res.json.result.error.errors).toContainEqual(expect.objectContaining({ code, parameter }));
      expect(JSON.stringify(res.json)).not.toContain(SANDBOX_CARDS[1]);
      // Nothing was recorded, nothing was charged.
      const rows = await db.query('SELECT 1 FROM transactions WHERE merchant_id = $1 AND reference = $2', [
        shop.internalId,
        body.order.reference,
      ]);
      expect(rows.rowCount).toBe(0);
    });

    it('lists every problem of a split at once', async () => {
      const res = await receiver(
        'sale',
        sale(10_000, [{ percentage: 10 }, { recipient: pending, amount: 0 }, entry(0, { percentage: '1.001' })]),
      );
      expect(res.status).toBe(400);
      expect(res.json.result.error.errors.map((e: Json) => e.code)).toEqual(
        expect.arrayContaining([
          'SPLIT_RECIPIENT_REQUIRED',
          'SPLIT_RECIPIENT_NOT_ACTIVE',
          'SPLIT_AMOUNT_OUT_OF_RANGE',
          'SPLIT_PERCENTAGE_PRECISION',
        ]),
      );
    });

    it('a fixed fee not below the amount is refused even without a split', async () => {
      const tiny = await createMerchant('tiny fees');
      await runCli([
        'fees:set',
        '--merchant',
        tiny.merchantId,
        '--kind',
        'credit',
        '--brand',
        'visa',
        '--instalments',
        '1',
        '--rate',
        '0',
        '--fixed',
        '50',
      ]);
      const res = await receiver('sale', sale(50, undefined), tiny);
      expect(res.status).toBe(400);
      expect(res.json.result.error.errors).toContainEqual(
        expect.objectContaining({ code: 'FEE_EXCEEDS_AMOUNT', parameter: 'payment.amount' }),
      );
    });
  });

  it('docs/merchants/split.md example 2: the response carries the split, settlement writes the same cents', async () => {
    const split = [
      { recipient: r[0], percentage: '33.33', charge_processing_fee: 'true', liable: 'true' },
      { recipient: r[1], percentage: 33.33, charge_processing_fee: true },
    ];
    const res = await receiver('sale', sale(12_345, split, { cardNumber: CANARY_CARDS.mastercard, flag: 'mastercard' }));
    expect(res.status).toBe(200);
    expect(res.json).toMatchObject({
      status: '8',
      processingFee: '424',
      split: [
        { recipient: r[0], grossAmount: '4114', feeAmount: '141', netAmount: '3973', mode: 'PRORATA', liable: 'true' },
        { recipient: r[1], grossAmount: '4114', feeAmount: '141', netAmount: '3973', mode: 'PRORATA', liable: 'true' },
      ],
      splitResidual: { grossAmount: '4117', feeAmount: '142', netAmount: '3975' },
    });
    const rows = await settled(res.json.transactionId);
    expect(rows.map((p) => [p.party, p.gross, p.fee, p.net])).toEqual([
      ['merchant', 4117, 142, 3975],
      [r[0], 4114, 141, 3973],
      [r[1], 4114, 141, 3973],
    ]);
    const report = await receiver('report', { transactionId: res.json.transactionId });
    expect(report.json.payables).toHaveLength(3);
    expect(report.json.payables[0]).toEqual({
      recipient: 'merchant',
      kind: 'capture',
      instalment: '1',
      dueDate: expect.stringMatching(/^\d{4}-\d{2}-\d{2}$/),
      grossAmount: '4117',
      feeAmount: '142',
      netAmount: '3975',
      status: 'pending',
    });
  });

  it('a 3-entry split in 12 instalments: payables per party × instalment match the engine', async () => {
    const split = [
      { recipient: r[0], amount: 30_001, charge_processing_fee: true, is_gross_amount: true },
      { recipient: r[1], percentage: '12.5', charge_processing_fee: true },
      { recipient: r[2], amount: 777 },
    ];
    const amount = 123_457;
    const res = await receiver('sale', sale(amount, split, { method: 2, numberOfPayments: 12 }));
    expect(res.json.status).toBe('8');
    const fee = processingFee(amount, { ratePpm: 45_000, fixed: 10 });
    expect(res.json.processingFee).toBe(String(fee));
    const expected = computeSplit(
      [
        {
          recipient: r[0],
          amount: 30_001,
          liable: true,
          chargeProcessingFee: true,
          chargeRecipientProcessingFee: false,
          isGrossAmount: true,
        },
        {
          recipient: r[1],
          percentage: '12.5',
          liable: true,
          chargeProcessingFee: true,
          chargeRecipientProcessingFee: false,
          isGrossAmount: false,
        },
        {
          recipient: r[2],
          amount: 777,
          liable: true,
          chargeProcessingFee: false,
          chargeRecipientProcessingFee: false,
          isGrossAmount: false,
        },
      ],
      amount,
      fee,
    );
    const rows = await settled(res.json.transactionId);
    expect(rows).toHaveLength(4 * 12);
    const capturedOn = new Date().toISOString().slice(0, 10);
    const cells = payableCells(expected, 12, 'credit', capturedOn);
    expect(rows.map((p) => ({ party: p.party, instalment: p.instalment, due: p.due, gross: p.gross, fee: p.fee, net: p.net }))).toEqual(
      cells.map((c) => ({ party: c.party, instalment: c.instalment, due: c.dueDate, gross: c.gross, fee: c.fee, net: c.net })),
    );
    expect(rows.reduce((s, p) => s + p.gross, 0)).toBe(amount);
  });

  it('an authorization settles on capture (partial: the split of the captured amount), and two partial cancels reverse cumulatively', async () => {
    const split = [
      { recipient: r[0], percentage: 50, charge_processing_fee: true },
      { recipient: r[1], percentage: 25 },
    ];
    const auth = await receiver('authorize', sale(10_001, split));
    expect(auth.json.status).toBe('3');
    const id = auth.json.transactionId;
    expect(await payablesOf(id)).toEqual([]);
    const captured = await receiver('capture', { transactionId: id, amount: 9_999 });
    expect(captured.json).toMatchObject({ status: '8', processingFee: String(processingFee(9_999, VISA_1X)) });
    const rows = await settled(id);
    expect(rows.reduce((s, p) => s + p.gross, 0)).toBe(9_999);

    await receiver('cancel', { transactionId: id, amount: 3_333 });
    await receiver('cancel', { transactionId: id, amount: 6_666 });
    const debits = await eventually(async () => {
      const all = (await payablesOf(id)).filter((p) => p.kind === 'cancel');
      expect(all.reduce((s, p) => s + p.gross, 0)).toBe(9_999);
      return all;
    });
    // After the full cancel each party has been debited exactly its gross slice.
    const byParty = (kind: string, rowsOf: Json[]) =>
      rowsOf
        .filter((p) => p.kind === kind)
        .reduce((m, p) => ({ ...m, [p.party]: (m[p.party] ?? 0) + p.gross }), {} as Record<string, number>);
    expect(byParty('cancel', debits)).toEqual(byParty('capture', rows));
    expect(debits.length).toBeGreaterThanOrEqual(3);
  });

  it('refuses a partial capture the split cannot be paid from', async () => {
    const auth = await receiver('authorize', sale(10_000, [{ recipient: r[0], amount: 8_000 }]));
    const res = await receiver('capture', { transactionId: auth.json.transactionId, amount: 5_000 });
    expect(res.status).toBe(400);
    expect(res.json.result.error.errors).toContainEqual(expect.objectContaining({ code: 'SPLIT_AMOUNT_OUT_OF_RANGE' }));
    expect((await receiver('report', { transactionId: auth.json.transactionId })).json.status).toBe('3');
  });

  it('a sale with only tokenCard is split by the brand of the vaulted card', async () => {
    const token = await post(stack.baseUrl, '/v1/token/add', {
      'transaction-request': {
        version: '1.0.0',
        verification: shop,
        tokencard: {
          cardNumber: CANARY_CARDS.mastercard,
          cardHolder: 'SDK USER',
          cardExpirationDate: '203111',
          cardSecurityCode: CANARY_CODES[1],
        },
      },
    });
    const res = await receiver('sale', {
      order: { reference: `SPLIT-${++ref}`, totalAmount: 15_000 },
      payment: {
        acquirer: 26,
        method: 1,
        amount: 15_000,
        currency: 986,
        country: 'BRA',
        numberOfPayments: 1,
        tokenCard: token.json.TokenCard,
        split: [
          { recipient: r[0], amount: 6000, charge_processing_fee: true, is_gross_amount: true },
          { recipient: r[1], amount: '4000', charge_processing_fee: 'true' },
          { recipient: r[2], amount: 1500 },
        ],
      },
      fraud: 'true',
    });
    // docs/merchants/split.md example 5 (mastercard 3.19 % + 30).
    expect(res.json).toMatchObject({
      status: '8',
      processingFee: '509',
      split: [
        { grossAmount: '6000', feeAmount: '203', netAmount: '5797', mode: 'PRORATA' },
        { grossAmount: '4000', feeAmount: '0', netAmount: '4000', mode: 'NET_AMOUNT' },
        { grossAmount: '1500', feeAmount: '0', netAmount: '1500', mode: 'FREE' },
      ],
      splitResidual: { grossAmount: '3500', feeAmount: '306', netAmount: '3194' },
    });
    expect(processingFee(15_000, MASTERCARD_1X)).toBe(509);
  });

  it('chargebacks debit liable entries only, else the merchant', async () => {
    const withLiable = await receiver(
      'sale',
      sale(10_000, [
        { recipient: r[0], percentage: 30, liable: true },
        { recipient: r[1], percentage: 10, liable: 'false' },
        { recipient: r[2], percentage: 30, liable: 'true' },
      ]),
    );
    await settled(withLiable.json.transactionId);
    const cb = await runCli<Json>([
      'chargeback:record',
      '--transaction',
      withLiable.json.transactionId,
      '--amount',
      '1001',
      '--id',
      'CB-1',
    ]);
    // The acquirer's id makes a second recording of the same chargeback a no-op.
    expect(
      await runCli<Json>(['chargeback:record', '--transaction', withLiable.json.transactionId, '--amount', '1001', '--id', 'CB-1']),
    ).toMatchObject({ repeated: true, chargedBack: 1001, debits: [] });
    // 1001 over two equal liable slices: 500 each, the remainder cent to the earliest (principal).
    expect(cb.debits).toEqual([
      { party: r[0], amount: 501 },
      { party: r[2], amount: 500 },
    ]);
    // What the chargeback returned cannot be refunded again: a full cancel refunds the rest only.
    const refund = await receiver('cancel', { transactionId: withLiable.json.transactionId });
    expect(refund.json).toMatchObject({ status: '12', processor: { cancelledAmount: '8999' } });
    const again = await receiver('cancel', { transactionId: withLiable.json.transactionId, amount: 1 });
    expect(again.status).toBe(409);
    await eventually(async () => {
      const debits = (await payablesOf(withLiable.json.transactionId)).filter((p) => p.kind === 'cancel');
      expect(debits.reduce((sum, p) => sum + p.gross, 0)).toBe(8999);
    });

    const noLiable = await receiver('sale', sale(10_000, [{ recipient: r[0], percentage: 30, liable: false }]));
    await settled(noLiable.json.transactionId);
    expect((await runCli<Json>(['chargeback:record', '--transaction', noLiable.json.transactionId, '--amount', '700'])).debits).toEqual([
      { party: 'merchant', amount: 700 },
    ]);
    const tooMuch = await runCliRaw(['chargeback:record', '--transaction', noLiable.json.transactionId, '--amount', '9301']);
    expect(tooMuch.code).toBe(1);
    expect(tooMuch.stderr).toMatch(/must not exceed the 9300 cents/);
  });

  it('the same transaction.captured event delivered twice writes one set of payables', async () => {
    const res = await receiver('sale', sale(5_000, [{ recipient: r[3], percentage: 20 }]));
    const before = await settled(res.json.transactionId);
    const prefix = process.env.QUEUE_PREFIX!;
    const partitions = Number(process.env.QUEUE_PARTITIONS ?? 1);
    const connection = testRedis({ maxRetriesPerRequest: null });
    const client = new BullMqClient({ connection: testRedisTarget(), prefix, partitions });
    const streams = Array.from({ length: partitions }, (_, i) =>
      eventStreamKeys(connection, prefix, Events.TransactionCaptured, i, partitions),
    );
    const depth = async () => {
      const parts = await Promise.all(streams.map((keys) => streamDepth(connection, keys)));
      return parts.reduce(
        (sum, d) => ({ unread: sum.unread + d.waiting, unacknowledged: sum.unacknowledged + d.active, dead: sum.dead + d.failed }),
        {
          unread: 0,
          unacknowledged: 0,
          dead: 0,
        },
      );
    };
    try {
      const deadBefore = (await depth()).dead;
      const payload = {
        transactionId: res.json.transactionId,
        merchantId: shop.internalId,
        statusVersion: 2,
        amount: 5_000,
        capturedAmount: 5_000,
        cancelledAmount: 0,
      };
      // Three deliveries of one event under three ids (the dedup window would fold one id's into one).
      for (const i of [1, 2, 3])
        expect(
          await lastValueFrom(
            client.emit(Events.TransactionCaptured, withJobId({ ...payload }, `redelivery-${res.json.transactionId}-${i}`)),
          ),
        ).toBe(true);
      // All read and acknowledged, none given up on.
      await eventually(async () => expect(await depth()).toEqual({ unread: 0, unacknowledged: 0, dead: deadBefore }));
    } finally {
      await client.close();
      connection.disconnect();
    }
    expect(await payablesOf(res.json.transactionId)).toEqual(before);
  });

  it('the settlement worker killed mid-batch: no payable lost, none doubled', async () => {
    await stack.settlement.kill();
    const ids = (
      await Promise.all(
        Array.from({ length: 60 }, (_, i) =>
          receiver('sale', sale(1_000 + i, [{ recipient: r[i % 4], percentage: 15, charge_processing_fee: true }])),
        ),
      )
    ).map((res) => res.json.transactionId as string);
    await stack.restart('settlement', 'SIGKILL', { WORKER_CONCURRENCY: 'transaction.captured=1' });
    // Kill it again while it works through the backlog, then let it finish.
    await eventually(
      async () =>
        expect(
          (await db.query('SELECT count(*)::int AS n FROM settlements WHERE transaction_id = ANY($1)', [ids.map((i) => i.toLowerCase())]))
            .rows[0].n,
        ).toBeGreaterThan(0),
      { intervalMs: 5 },
    );
    await stack.settlement.kill();
    await stack.restart('settlement', 'SIGKILL', { WORKER_CONCURRENCY: 'transaction.captured=2' });
    await eventually(
      async () => {
        const n = (
          await db.query('SELECT count(*)::int AS n FROM settlements WHERE transaction_id = ANY($1)', [ids.map((i) => i.toLowerCase())])
        ).rows[0].n;
        expect(n).toBe(60);
      },
      { timeoutMs: 60_000 },
    );
    const counts = await db.query(
      `SELECT transaction_id, count(*)::int AS n, sum(gross)::int AS gross FROM payables WHERE transaction_id = ANY($1) GROUP BY transaction_id`,
      [ids.map((i) => i.toLowerCase())],
    );
    expect(counts.rows.filter((c) => c.n !== 2)).toEqual([]);
    expect(counts.rows.reduce((s, c) => s + c.gross, 0)).toBe(ids.reduce((s, _id, i) => s + 1_000 + i, 0));
  });

  it('payables:list by recipient and by merchant, and ledger:verify finds no difference', async () => {
    const mine = await runCli<Json[]>(['payables:list', '--recipient', r[0]]);
    expect(mine.length).toBeGreaterThan(0);
    expect(mine.every((p) => p.recipient === r[0] && typeof p.grossAmount === 'number')).toBe(true);
    const all = await runCli<Json[]>(['payables:list', '--merchant', shop.merchantId]);
    expect(all.length).toBeGreaterThan(mine.length);
    const report = await runCli<Json>(['ledger:verify', '--merchant', shop.merchantId]);
    expect(report.transactions).toBeGreaterThan(60);
    expect(report.differences).toEqual([]);
  });

  it('ledger:verify reports a difference and exits 1 when a payable is tampered with', async () => {
    const res = await receiver('sale', sale(2_000, [{ recipient: r[0], percentage: 10 }], {}), other);
    expect(res.status).toBe(400); // r[0] is not other's recipient
    const ok = await receiver('sale', sale(2_000, undefined), other);
    await settled(ok.json.transactionId);
    await db.query(`UPDATE payables SET gross = gross + 1, net = net + 1 WHERE transaction_id = $1`, [ok.json.transactionId.toLowerCase()]);
    const run = await runCliRaw<Json>(['ledger:verify', '--merchant', other.merchantId]);
    expect(run.code).toBe(1);
    expect(run.json!.differences).toContainEqual(
      expect.objectContaining({
        transactionId: ok.json.transactionId,
        check: 'capture payables gross = captured amount',
        expected: 2_000,
        actual: 2_001,
      }),
    );
  });
});
