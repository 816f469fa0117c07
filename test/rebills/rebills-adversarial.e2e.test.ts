import { Client } from 'pg';
import { createMerchant, eventually, MerchantCredentials, post, runCliRaw, Stack, startStack } from '../support/stack';
import { CANARY_CODES, SANDBOX_CARDS } from '../fixtures/cards';
import { retireEarlierRebills } from '../support/rebills';

jest.setTimeout(300_000);

// eslint-disable-next-line @typescript-eslint/no-explicit-any
type Json = Record<string, any>;

/**
 * Rebills under attack: what a merchant, an operator or the
 * machinery can do around a charge that must still leave each cycle charged at most once. Each
 * test schedules in a year of its own, as rebills.e2e.test.ts does.
 */
describe('rebills: adversarial cases', () => {
  let stack: Stack;
  let shop: MerchantCredentials;
  let db: Client;
  let ref = 0;

  const receiver = (op: string, body: unknown, m = shop, headers: Record<string, string> = {}) =>
    post(
      stack.baseUrl,
      '/v1/receiver',
      { 'transaction-request': { version: '1.0.0', verification: { merchantId: m.merchantId, merchantKey: m.merchantKey }, [op]: body } },
      headers,
    );

  const body = (o: { card?: number; dateStart: string; dateEnd: string; period?: number }): Json => ({
    order: {
      reference: `adv-${++ref}`,
      totalAmount: 1990,
      period: o.period ?? 3,
      frequency: 1,
      dateStart: o.dateStart,
      dateEnd: o.dateEnd,
    },
    paymentCreditCard: {
      acquirer: 26,
      amount: 1990,
      currency: '986',
      country: 'BRA',
      numberOfPayments: 1,
      flag: 'visa',
      cardHolder: 'MARIA SILVA',
      cardNumber: SANDBOX_CARDS[o.card ?? 1],
      cardSecurityCode: CANARY_CODES[1],
      cardExpirationDate: '203512',
    },
  });

  /** Every charge of a rebill, with how many times the sandbox acquirer approved it. */
  const charges = async (rebillId: string) =>
    (
      await db.query(
        `SELECT c.cycle, c.attempt, t.status,
           (SELECT count(*)::int FROM sandbox_calls s
             WHERE s.operation_key = t.id || '-authorize' AND NOT s.repeat AND s.result->>'outcome' = 'approved') AS approvals
         FROM rebill_cycles c JOIN transactions t ON t.id = c.transaction_id WHERE c.rebill_id = $1 ORDER BY c.cycle, c.attempt`,
        [rebillId.toLowerCase()],
      )
    ).rows as { cycle: number; attempt: number; status: number; approvals: number }[];

  const openCharge = (rebillId: string) =>
    eventually(async () => {
      const [row] = (await db.query(`SELECT open_transaction_id FROM rebills WHERE id = $1`, [rebillId.toLowerCase()])).rows;
      expect(row.open_transaction_id).not.toBeNull();
      return row.open_transaction_id as string;
    });

  beforeAll(async () => {
    await retireEarlierRebills();
    // A slow approval (…9) keeps a charge in flight long enough to act on it meanwhile.
    // The tokenizer's own scheduler polls often, to race the CLI's passes.
    stack = await startStack({ SANDBOX_SLOW_APPROVAL_MS: '1500', REBILL_POLL_MS: '200', REBILL_RESEND_AFTER_S: '2' });
    shop = await createMerchant('rebill review shop');
    db = new Client({ connectionString: process.env.DATABASE_URL });
    await db.connect();
  });

  afterAll(async () => {
    await db?.end();
    await stack?.stop();
  });

  it('a charge refunded before its rebill moved on is not charged again as a declined retry', async () => {
    const created = await receiver('rebill', body({ card: 9, dateStart: '2061-03-01', dateEnd: '2061-12-01' }));
    expect(created.status).toBe(200);
    const id = created.json.transactionId as string;
    // The rebill moves on after its charge is decided; hold its row meanwhile (as a cancel or a
    // second runner does for a moment, or as a tokenizer that died after the decision leaves it),
    // so the decided charge stays open.
    const run = runCliRaw(['rebill:run-due', '--as-of', '2061-03-01T01:00:00Z', '--timeout-s', '4']);
    const ticket = await openCharge(id);
    const holder = new Client({ connectionString: process.env.DATABASE_URL });
    await holder.connect();
    try {
      await holder.query('BEGIN');
      await holder.query('SELECT 1 FROM rebills WHERE id = $1 FOR UPDATE', [id.toLowerCase()]);
      expect((await run).code).not.toBe(0);
      expect((await charges(id)).map((c) => [c.cycle, c.attempt, c.status, c.approvals])).toEqual([[1, 0, 8, 1]]);
      // The merchant heard of the approved charge (its webhook) and refunds it by its ticket.
      const refund = await receiver('cancel', { transactionId: ticket.toUpperCase() });
      expect(refund.status).toBe(200);
      expect(refund.json.status).toBe('6');
    } finally {
      await holder.query('COMMIT').catch(() => undefined);
      await holder.end();
    }
    // Past the first retry day, before the next cycle's date: the first cycle was paid (then
    // refunded by the merchant); it is not charged a second time.
    await runCliRaw(['rebill:run-due', '--as-of', '2061-03-05T01:00:00Z']);
    const all = await charges(id);
    expect(all.filter((c) => c.cycle === 1).reduce((n, c) => n + c.approvals, 0)).toBe(1);
    expect(all.map((c) => [c.cycle, c.attempt])).toEqual([[1, 0]]);
    const report = await receiver('report', { transactionId: id });
    expect(report.json.rebill).toMatchObject({ state: 'ACTIVE', nextDate: '2061-04-01' });
  });

  it("a split problem names the rebill's own field (paymentCreditCard.split…), and nothing is recorded", async () => {
    const count = async () => (await db.query('SELECT count(*)::int AS n FROM rebills')).rows[0].n;
    const before = await count();
    const b = body({ dateStart: '2062-01-10', dateEnd: '2062-12-10' });
    const unknown = await receiver('rebill', {
      ...b,
      paymentCreditCard: { ...b.paymentCreditCard, split: [{ recipient: '0b6f5c3e-6a4d-4f0e-9a1b-2c3d4e5f6a7b', percentage: '50' }] },
    });
    expect(unknown.status).toBe(400);
    expect(unknown.json.result.error.parameter).toBe('paymentCreditCard.split[0].recipient');
    expect(await count()).toBe(before);
  });

  it('three rebill:run-due at the same as-of, with the tokenizer polling meanwhile: each cycle approved once, none skipped', async () => {
    // Approved, slow approval, soft decline, acquirer timeout (reversed, then declined).
    const cards = [1, 9, 2, 8, 4, 1];
    const ids = [];
    for (const card of cards) {
      const res = await receiver('rebill', body({ card, period: 1, dateStart: '2063-05-01', dateEnd: '2063-05-06' }));
      expect(res.status).toBe(200);
      ids.push(res.json.transactionId as string);
    }
    const runs = await Promise.all([1, 2, 3].map(() => runCliRaw(['rebill:run-due', '--as-of', '2063-05-20T00:00:00Z', '--batch', '2'])));
    expect(runs.map((r) => r.code)).toEqual([0, 0, 0]);
    for (const [i, id] of ids.entries()) {
      const all = await charges(id);
      if ([2, 8].includes(cards[i])) {
        // Declined each time: the first cycle and its three retries, then suspended.
        expect(all.map((c) => [c.cycle, c.attempt, c.approvals])).toEqual([0, 1, 2, 3].map((a) => [1, a, 0]));
      } else {
        expect(all.map((c) => [c.cycle, c.attempt, c.status, c.approvals])).toEqual([1, 2, 3, 4, 5, 6].map((n) => [n, 0, 8, 1]));
      }
    }
  });

  it("a cancelled rebill's charge that never reached the acquirer is not sent to it after the cancel answered", async () => {
    const created = await receiver('rebill', body({ dateStart: '2064-02-01', dateEnd: '2064-12-01' }));
    const id = created.json.transactionId as string;
    // The charge is opened, but its authorization cannot be queued (Redis unreachable from this run).
    const run = await runCliRaw(['rebill:run-due', '--as-of', '2064-02-01T01:00:00Z', '--timeout-s', '1'], {
      REDIS_URL: 'redis://127.0.0.1:1',
      REDIS_CLUSTER_NODES: '',
    });
    expect(run.code).not.toBe(0);
    const ticket = await openCharge(id);
    const cancelled = await receiver('cancel', { transactionId: id });
    expect(cancelled.status).toBe(200);
    expect(cancelled.json.rebill.state).toBe('CANCELLED');
    // Sent again by the tokenizers' scheduler: decided without charging the card (not processed).
    await eventually(
      async () => {
        const [t] = (await db.query(`SELECT status, error_code FROM transactions WHERE id = $1`, [ticket])).rows;
        expect(t).toEqual({ status: 4, error_code: '101' });
      },
      { timeoutMs: 20_000 },
    );
    expect((await charges(id)).map((c) => c.approvals)).toEqual([0]);
  });
});
