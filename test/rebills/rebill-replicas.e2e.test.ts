import { Client } from 'pg';
import { rebillChargeId, RebillPeriods } from '@app/contracts';
import { cycleDate } from '@app/rebills';
import { SANDBOX_CARDS } from '../fixtures/cards';
import { AppHandle, createMerchant, eventually, MerchantCredentials, post, Stack, startApp, startStack } from '../support/stack';
import { retireEarlierRebills } from '../support/rebills';

jest.setTimeout(300_000);

/**
 * Two tokenizers charge the same due rebill cycles (each polls every 200 ms and sends what it
 * opens on the shared queue, where both take jobs), and one of them is SIGKILLed while charges are
 * in flight: the slow sandbox card (last digit 9) takes 1.5 s to be approved, so the kill can land
 * on charges opened but not sent, sent but not decided, and decided but not yet moved on. A killed
 * worker's jobs come back after BullMQ's lock lapses (10 s) and the stalled check runs (every
 * 15 s); the schedulers re-send undecided charges after REBILL_RESEND_AFTER_S (3 s) and move on
 * rebills whose decided charge was not followed up. Whatever happened, each (rebill, cycle) is
 * approved at the acquirer once, a retry is opened only after the try before was declined, and no
 * due cycle is skipped.
 */

const ENV = {
  REBILL_POLL_MS: '200',
  REBILL_RESEND_AFTER_S: '3',
  // Small batches: both schedulers open charges, a few at a time, while earlier ones are decided.
  REBILL_BATCH: '4',
  REBILL_RETRY_DAYS: '1,3,5',
  SANDBOX_SLOW_APPROVAL_MS: '1500',
  DB_POOL_SIZE: '8',
};

/** The cards of the rebills, by sandbox last digit: mostly slow approvals, some fast, soft and hard declines. */
const DIGITS = [...Array<number>(20).fill(9), ...Array<number>(6).fill(1), ...Array<number>(4).fill(2), ...Array<number>(2).fill(5)];
/** Monthly from a date of this suite's own (no other suite charges in 2044). */
const DATE_START = '2044-03-31';
const DATE_END = '2045-03-31';

interface Charge {
  cycle: number;
  attempt: number;
  id: string;
  status: number;
  return_code: string | null;
  /** The acquirer's first calls under the charge's operation key (repeats act on nothing). */
  first_calls: number;
  approved_calls: number;
  repeats: number;
  first_call_at: Date | null;
}

interface RebillState {
  state: string;
  next_cycle: number;
  next_attempt: number;
  next_due: string | null;
  open_transaction_id: string | null;
  suspended_reason: string | null;
}

describe('rebill cycles charged by two tokenizers, one SIGKILLed mid-cycle', () => {
  let stack: Stack;
  let second: AppHandle;
  let shop: MerchantCredentials;
  let db: Client;
  const rebills: { id: string; digit: number }[] = [];

  const charges = async (): Promise<Map<string, Charge[]>> => {
    const { rows } = await db.query<Charge & { rebill_id: string }>(
      `SELECT c.rebill_id, c.cycle, c.attempt, t.id, t.status, t.processor->>'returnCode' AS return_code,
         (SELECT count(*)::int FROM sandbox_calls s WHERE s.operation_key = t.id || '-authorize' AND NOT s.repeat) AS first_calls,
         (SELECT count(*)::int FROM sandbox_calls s WHERE s.operation_key = t.id || '-authorize' AND NOT s.repeat
            AND s.result->>'outcome' = 'approved') AS approved_calls,
         (SELECT count(*)::int FROM sandbox_calls s WHERE s.operation_key = t.id || '-authorize' AND s.repeat) AS repeats,
         (SELECT min(s.created_at) FROM sandbox_calls s WHERE s.operation_key = t.id || '-authorize') AS first_call_at
       FROM rebill_cycles c JOIN transactions t ON t.id = c.transaction_id
       WHERE c.rebill_id = ANY($1) ORDER BY c.rebill_id, c.cycle, c.attempt`,
      [rebills.map((r) => r.id)],
    );
    const out = new Map<string, Charge[]>(rebills.map((r) => [r.id, []]));
    for (const { rebill_id, ...c } of rows) out.get(rebill_id)!.push(c);
    return out;
  };

  const states = async (): Promise<Map<string, RebillState>> => {
    const { rows } = await db.query<RebillState & { id: string }>(
      `SELECT id, state, next_cycle, next_attempt, to_char(next_due_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS') AS next_due,
         open_transaction_id, suspended_reason FROM rebills WHERE id = ANY($1)`,
      [rebills.map((r) => r.id)],
    );
    return new Map(rows.map(({ id, ...s }) => [id, s]));
  };

  /**
   * Time passes: the active rebills' next charge (cycle or retry) falls due now. Only the due time
   * moves; the cycle and attempt the rebill stands at, and the cycle's own date, are untouched.
   */
  const makeDueNow = async (): Promise<number> =>
    (
      await db.query(`UPDATE rebills SET next_due_at = now() - interval '1 second' WHERE id = ANY($1) AND state = 'active'`, [
        rebills.map((r) => r.id),
      ])
    ).rowCount ?? 0;

  /**
   * Waits until every active rebill of the suite has nothing in flight, every charge is decided,
   * and nothing is still due: a scheduler opens a few charges at a time, so the instant between
   * one batch decided and the next opened has nothing open while rebills still wait their turn.
   */
  const settled = () =>
    eventually(
      async () => {
        const { rows } = await db.query<{ open: number; undecided: number; due: number }>(
          `SELECT (SELECT count(*)::int FROM rebills WHERE id = ANY($1) AND open_transaction_id IS NOT NULL) AS open,
             (SELECT count(*)::int FROM rebill_cycles c JOIN transactions t ON t.id = c.transaction_id
              WHERE c.rebill_id = ANY($1) AND t.status = 0) AS undecided,
             (SELECT count(*)::int FROM rebills WHERE id = ANY($1) AND state = 'active' AND next_due_at <= now()) AS due`,
          [rebills.map((r) => r.id)],
        );
        expect(rows[0]).toEqual({ open: 0, undecided: 0, due: 0 });
      },
      { timeoutMs: 90_000, intervalMs: 250 },
    );

  /** Waits until the kill can land mid-cycle: some charges decided, some still in flight. */
  const midCycle = (cycle: number) =>
    eventually(
      async () => {
        const { rows } = await db.query<{ decided: number; undecided: number }>(
          `SELECT count(*) FILTER (WHERE t.status <> 0)::int AS decided, count(*) FILTER (WHERE t.status = 0)::int AS undecided
           FROM rebill_cycles c JOIN transactions t ON t.id = c.transaction_id WHERE c.rebill_id = ANY($1) AND c.cycle = $2`,
          [rebills.map((r) => r.id), cycle],
        );
        if (rows[0].decided < 3 || rows[0].undecided < 3) throw new Error(`not mid-cycle yet: ${JSON.stringify(rows[0])}`);
        return rows[0];
      },
      { timeoutMs: 30_000, intervalMs: 20 },
    );

  /**
   * After `rounds` rounds of charging (cycle n due in round n for the approving cards, one try per
   * round for the soft decline): the record and the acquirer show each approved cycle once, each
   * declined try once, in order, and nothing beyond.
   */
  async function expectCharged(rounds: number): Promise<void> {
    const all = await charges();
    const now = await states();
    for (const { id, digit } of rebills) {
      const mine = all.get(id)!;
      const s = now.get(id)!;
      // Whatever the outcome, one acquirer call per charge, and nothing left open.
      expect(mine.filter((c) => c.first_calls !== 1)).toEqual([]);
      expect(s.open_transaction_id).toBeNull();
      // In (cycle, attempt) order at the acquirer too: each call came after the one before it (a
      // statement of its own, begun only once the charge before was decided and the rebill moved on).
      const times = mine.map((c) => c.first_call_at!.getTime());
      expect(times.every((t, k) => k === 0 || t > times[k - 1])).toBe(true);
      if (digit === 9 || digit === 1) {
        // Cycles 1..rounds, each approved once, in order; the next cycle is scheduled on its own date.
        expect(mine.map((c) => [c.cycle, c.attempt, c.status, c.approved_calls])).toEqual(
          Array.from({ length: rounds }, (_, i) => [i + 1, 0, 8, 1]),
        );
        expect(s).toMatchObject({ state: 'active', next_cycle: rounds + 1, next_attempt: 0 });
        expect(s.next_due).toBe(`${cycleDate(DATE_START, RebillPeriods.Monthly, 1, rounds + 1)}T00:00:00`);
      } else if (digit === 2) {
        // Cycle 1 declined on every try so far, each retry opened after the one before was declined.
        expect(mine.map((c) => [c.cycle, c.attempt, c.status, c.return_code, c.approved_calls])).toEqual(
          Array.from({ length: rounds }, (_, i) => [1, i, 4, '05', 0]),
        );
        // REBILL_RETRY_DAYS 1,3,5 after the cycle's date (31 March).
        expect(s).toMatchObject({ state: 'active', next_cycle: 1, next_attempt: rounds });
        expect(s.next_due).toBe(['2044-04-01T00:00:00', '2044-04-03T00:00:00'][rounds - 1]);
      } else {
        // Blocked card: declined once, never tried again however often it is due.
        expect(mine.map((c) => [c.cycle, c.attempt, c.status, c.return_code])).toEqual([[1, 0, 4, '78']]);
        expect(s).toMatchObject({ state: 'suspended', suspended_reason: 'hard_decline', next_due: null });
      }
      // Nothing was opened beyond where an active rebill stands: its next charge's id is not recorded.
      if (s.state === 'active') {
        const next = rebillChargeId(id, s.next_cycle, s.next_attempt);
        const { rows } = await db.query(`SELECT 1 FROM transactions WHERE id = $1`, [next]);
        expect(rows).toHaveLength(0);
      }
    }
  }

  beforeAll(async () => {
    await retireEarlierRebills();
    stack = await startStack(ENV, { envFor: { tokenizer: { REPLICA_NAME: 'tokenizer-1' } }, readyTimeoutMs: 90_000 });
    [second, shop] = await Promise.all([
      startApp('tokenizer', { ...ENV, REPLICA_NAME: 'tokenizer-2' }, { label: 'tokenizer-2', readyTimeoutMs: 90_000 }),
      createMerchant('rebill replicas shop'),
    ]);
    db = new Client({ connectionString: process.env.DATABASE_URL });
    await db.connect();
  });

  afterAll(async () => {
    await db?.end();
    await second?.stop();
    await stack?.stop();
  });

  it(`creates ${DIGITS.length} rebills dated in the future over HTTP: nothing is charged yet`, async () => {
    const create = async (digit: number, i: number) => {
      const res = await post(stack.baseUrl, '/v1/receiver', {
        'transaction-request': {
          version: '1.0.0',
          verification: { merchantId: shop.merchantId, merchantKey: shop.merchantKey },
          rebill: {
            order: { reference: `replica-${i}`, totalAmount: 2500, period: 3, frequency: 1, dateStart: DATE_START, dateEnd: DATE_END },
            paymentCreditCard: {
              acquirer: 26,
              amount: 2500,
              currency: '986',
              country: 'BRA',
              numberOfPayments: 1,
              flag: 'visa',
              cardHolder: 'REPLICA REBILL',
              cardNumber: SANDBOX_CARDS[digit],
              cardExpirationDate: '203512',
            },
          },
        },
      });
      expect(res.status).toBe(200);
      expect(res.json).toMatchObject({ status: '10', rebill: { nextDate: DATE_START } });
      return { id: (res.json.transactionId as string).toLowerCase(), digit };
    };
    for (let i = 0; i < DIGITS.length; i += 8) rebills.push(...(await Promise.all(DIGITS.slice(i, i + 8).map((d, j) => create(d, i + j)))));
    expect(rebills).toHaveLength(DIGITS.length);
    expect([...(await charges()).values()].flat()).toEqual([]);
  });

  it('cycle 1 falls due; the first tokenizer is SIGKILLed mid-cycle and restarted: each cycle approved once, retries and suspensions as due', async () => {
    const started = Date.now();
    expect(await makeDueNow()).toBe(DIGITS.length);
    const at = await midCycle(1);
    await stack.restart('tokenizer', 'SIGKILL');
    process.stdout.write(`cycle 1: SIGKILL with ${JSON.stringify(at)} charges; `);
    await settled();
    process.stdout.write(`settled ${Date.now() - started} ms after falling due\n`);
    await expectCharged(1);
  });

  it('cycle 2 (and the first retry) fall due; the second tokenizer is SIGKILLed mid-cycle and replaced: again once each', async () => {
    const started = Date.now();
    // The suspended rebills are not active: they stay out.
    expect(await makeDueNow()).toBe(DIGITS.filter((d) => d !== 5).length);
    const at = await midCycle(2);
    await second.kill();
    second = await startApp('tokenizer', { ...ENV, REPLICA_NAME: 'tokenizer-2' }, { label: 'tokenizer-2', readyTimeoutMs: 90_000 });
    process.stdout.write(`cycle 2: SIGKILL with ${JSON.stringify(at)} charges; `);
    await settled();
    process.stdout.write(`settled ${Date.now() - started} ms after falling due\n`);
    await expectCharged(2);
    // How the crashes were felt: authorizations that reached the acquirer again (answered from its
    // first record), and charges decided only after a dead worker's job came back (> 9 s).
    const repeats = [...(await charges()).values()].flat().reduce((n, c) => n + c.repeats, 0);
    const { rows } = await db.query<{ n: number }>(
      `SELECT count(*)::int AS n FROM rebill_cycles c JOIN transactions t ON t.id = c.transaction_id
       WHERE c.rebill_id = ANY($1) AND t.updated_at - t.created_at > interval '9 seconds'`,
      [rebills.map((r) => r.id)],
    );
    process.stdout.write(`acquirer repeats across both rounds: ${repeats}; charges decided after a redelivery: ${rows[0].n}\n`);
  });
});
