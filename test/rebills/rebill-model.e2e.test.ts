import 'reflect-metadata';
import fc from 'fast-check';
import { Client } from 'pg';
import { DataSource } from 'typeorm';
import { dateOfDay, RebillPeriod } from '@app/contracts';
import { BullMqClient, TypedClient } from '@app/messaging';
import { dataSourceOptions, RebillsRepository } from '@app/persistence';
import { cycleDate, dueAt, queueCharges, RebillLifecycle, RebillRunner } from '@app/rebills';
import { SANDBOX_CARDS } from '../fixtures/cards';
import { testRedisTarget } from '../support/redis';
import { createMerchant, HttpResult, MerchantCredentials, post, runCli, Stack, startStack } from '../support/stack';
import { retireEarlierRebills } from '../support/rebills';

jest.setTimeout(900_000);

// FC_NUM_RUNS (the global fast-check settings, with FC_SEED and FC_PATH) before this suite's own knob.
const RUNS = Number(process.env.FC_NUM_RUNS ?? process.env.REBILL_MODEL_RUNS ?? 8);
const DAY_MS = 86_400_000;

// eslint-disable-next-line @typescript-eslint/no-explicit-any
type Json = Record<string, any>;
const RETRY_DAYS = [1, 3, 5];

/**
 * Model-based check of the rebill scheduler under concurrency. fast-check generates histories of
 * rebills created over HTTP (approving, softly and hardly declining cards; every period), time
 * moving forward (RunDue: two runners charge what is due at the same as-of time at once, each an
 * in-process RebillRunner over a connection pool of its own, or one of them the operator CLI,
 * while the tokenizers decide the charges and move the rebills on from them), and cancels,
 * sometimes sent while the runners are charging. After each command the database (rebill_cycles
 * joined to transactions, and the sandbox acquirer's calls) must be what a model computed from
 * the schedule alone says: every due charge made once, in (cycle, attempt) order, none beyond,
 * each with one acquirer call (but a charge still open when a cancel landed, which the tokenizer
 * may abandon instead: 4 with 101 and no acquirer call).
 *
 * Time is the runners' --as-of, in years of this suite's own (from 2045 on: no other suite charges
 * that late, and the tokenizers' own schedulers, charging at the present time, never reach it).
 *
 * The interleaving is real: the runners, the CLI and the tokenizers are separate connection pools
 * and processes, which fc.scheduler cannot order. What fast-check controls (and shrinks) is when
 * each runner starts and when a racing cancel is sent: after a pause, or as soon as the rebill has
 * a charge in flight.
 */

type Kind = 'approve' | 'slow-approve' | 'soft' | 'timeout' | 'hard-blocked' | 'hard-expired';
/** The sandbox card's last digit for each kind of outcome. */
const DIGIT: Record<Kind, number> = { approve: 1, 'slow-approve': 9, soft: 2, timeout: 8, 'hard-blocked': 5, 'hard-expired': 3 };
const approves = (k: Kind) => k === 'approve' || k === 'slow-approve';
const isHard = (k: Kind) => k === 'hard-blocked' || k === 'hard-expired';

interface ExpectedCharge {
  cycle: number;
  attempt: number;
  status: number;
  /**
   * The charge was open when a cancel of the rebill landed (see judgeCancel). The tokenizer
   * abandons a charge of a cancelled rebill that it has not sent to the acquirer yet (status 4,
   * error 101, no acquirer call: SalesService.authorize, the `isCancelled(...)`
   * check before decideSale); one it already sent is decided. From outside, which of the two
   * happened is not known: either stands, and nothing else (see expectModel).
   */
  openAtCancel?: true;
}

interface ModelRebill {
  kind: Kind;
  period: RebillPeriod;
  frequency: number;
  dateStart: string;
  dateEnd: string;
  state: 'active' | 'suspended' | 'completed' | 'cancelled';
  reason?: 'hard_decline' | 'retries_exhausted';
  nextCycle: number;
  nextAttempt: number;
  /** ms since the epoch; null when nothing more is due. */
  nextDue: number | null;
  charges: ExpectedCharge[];
}

interface Model {
  /** The as-of time (ms) the runners last charged at. */
  clock: number;
  rebills: ModelRebill[];
}

interface Real {
  ids: string[];
}

/** What the rebill does after each charge, by the schedule alone, until nothing more is due at `asOf`. */
function chargeDue(r: ModelRebill, asOf: number): void {
  while (r.state === 'active' && r.nextDue !== null && r.nextDue <= asOf) {
    const { nextCycle: cycle, nextAttempt: attempt } = r;
    const ok = approves(r.kind);
    r.charges.push({ cycle, attempt, status: ok ? 8 : 4 });
    if (ok) {
      const date = cycleDate(r.dateStart, r.period, r.frequency, cycle + 1);
      r.nextCycle = cycle + 1;
      r.nextAttempt = 0;
      if (date > r.dateEnd) {
        r.state = 'completed';
        r.nextDue = null;
      } else r.nextDue = dueAt(date).getTime();
    } else if (isHard(r.kind) || attempt >= RETRY_DAYS.length) {
      r.state = 'suspended';
      r.reason = isHard(r.kind) ? 'hard_decline' : 'retries_exhausted';
      r.nextDue = null;
    } else {
      r.nextAttempt = attempt + 1;
      r.nextDue = dueAt(cycleDate(r.dateStart, r.period, r.frequency, cycle)).getTime() + RETRY_DAYS[attempt] * DAY_MS;
    }
  }
}

describe('rebills: model-based check of concurrent runners, cancels and the tokenizers', () => {
  let stack: Stack;
  let shop: MerchantCredentials;
  let db: Client;
  const pools: DataSource[] = [];
  const clients: BullMqClient[] = [];
  const runners: RebillRunner[] = [];
  /** The latest as-of any history used: each history starts after it, so histories never share time. */
  let timeline = Date.UTC(2045, 0, 1);
  let ref = 0;

  /** What the generated histories did, so a run that tested little cannot pass quietly. */
  const stats: Record<string, number> = {};
  const count = (what: string, n = 1) => (stats[what] = (stats[what] ?? 0) + n);

  /** What the in-process runners wait for before they send a rebill's opened charge to the queue: nothing, but under RunDue's `hold`. */
  const noHold = (): Promise<unknown> => Promise.resolve();
  let holdCharge: (rebillId: string | undefined) => Promise<unknown> = noHold;

  const receiver = (op: string, body: unknown): Promise<HttpResult> =>
    post(stack.baseUrl, '/v1/receiver', {
      'transaction-request': { version: '1.0.0', verification: { merchantId: shop.merchantId, merchantKey: shop.merchantKey }, [op]: body },
    });

  beforeAll(async () => {
    await retireEarlierRebills();
    stack = await startStack(
      { REBILL_RETRY_DAYS: RETRY_DAYS.join(','), REBILL_RESEND_AFTER_S: '5' },
      // The tokenizers' own schedulers charge at the present time (never this suite's years), but
      // they also move on rebills whose decided charge was not followed up: one more actor.
      { envFor: { tokenizer: { REBILL_POLL_MS: '300', SANDBOX_SLOW_APPROVAL_MS: '300' } } },
    );
    shop = await createMerchant('rebill model shop');
    db = new Client({ connectionString: process.env.DATABASE_URL });
    await db.connect();
    // Two runners as two scheduler processes would be: each its own pool and queue client. Small
    // batches, so they take turns within one as-of time.
    for (const batch of [2, 3]) {
      const pool = await new DataSource(dataSourceOptions(process.env.DATABASE_URL!, 4)).initialize();
      const client = new BullMqClient({ connection: testRedisTarget(), prefix: process.env.QUEUE_PREFIX, replyTimeoutMs: 30_000 });
      const send = queueCharges(new TypedClient(client));
      pools.push(pool);
      clients.push(client);
      runners.push(
        new RebillRunner(new RebillLifecycle(new RebillsRepository(pool)), (req) => holdCharge(req.rebill?.id).then(() => send(req)), {
          batch,
          resendAfterS: 5,
        }),
      );
    }
  });

  afterAll(async () => {
    await Promise.all(clients.map((c) => c.close()));
    await Promise.all(pools.map((p) => p.destroy()));
    await db?.end();
    await stack?.stop();
  });

  /** The record of the history's rebills: each charge with its outcome and the acquirer's calls, and where each rebill stands. */
  async function recorded(ids: string[]) {
    const charges = await db.query<{
      rebill_id: string;
      cycle: number;
      attempt: number;
      status: number;
      error_code: string | null;
      cycle_date: string;
      first_calls: number;
      any_calls: number;
      approved_calls: number;
      first_call_at: Date | null;
    }>(
      `SELECT c.rebill_id, c.cycle, c.attempt, t.status, t.error_code, to_char(c.cycle_date, 'YYYY-MM-DD') AS cycle_date,
         (SELECT count(*)::int FROM sandbox_calls s WHERE s.operation_key = t.id || '-authorize' AND NOT s.repeat) AS first_calls,
         (SELECT count(*)::int FROM sandbox_calls s WHERE s.operation_key LIKE t.id || '-%') AS any_calls,
         (SELECT count(*)::int FROM sandbox_calls s WHERE s.operation_key = t.id || '-authorize' AND NOT s.repeat
            AND s.result->>'outcome' = 'approved') AS approved_calls,
         (SELECT min(s.created_at) FROM sandbox_calls s WHERE s.operation_key = t.id || '-authorize') AS first_call_at
       FROM rebill_cycles c JOIN transactions t ON t.id = c.transaction_id
       WHERE c.rebill_id = ANY($1) ORDER BY c.rebill_id, c.cycle, c.attempt`,
      [ids],
    );
    const rows = await db.query<{
      id: string;
      state: string;
      next_cycle: number;
      next_attempt: number;
      next_due_at: Date | null;
      open_transaction_id: string | null;
      suspended_reason: string | null;
    }>(`SELECT id, state, next_cycle, next_attempt, next_due_at, open_transaction_id, suspended_reason FROM rebills WHERE id = ANY($1)`, [
      ids,
    ]);
    return {
      charges: (id: string) => charges.rows.filter((c) => c.rebill_id === id),
      row: (id: string) => rows.rows.find((r) => r.id === id)!,
    };
  }

  /** The record must be the model, rebill by rebill. */
  async function expectModel(model: Model, real: Real): Promise<void> {
    const rec = await recorded(real.ids);
    model.rebills.forEach((m, i) => {
      const id = real.ids[i];
      const got = rec.charges(id);
      const where = `rebill ${i} (${m.kind}, period ${m.period}×${m.frequency}, ${m.dateStart}..${m.dateEnd}) as of ${new Date(model.clock).toISOString()}`;
      // A charge open when a cancel landed may have been abandoned (4 with 101) instead of decided:
      // the record says which; anything else is judged as decided, as every other charge is.
      const abandoned = got.map((c, k) => Boolean(m.charges[k]?.openAtCancel) && c.status === 4 && c.error_code === '101');
      // Every due charge, once, in the order it was opened, and nothing beyond: the same list.
      expect({ where, charges: got.map((c) => ({ cycle: c.cycle, attempt: c.attempt, status: c.status })) }).toEqual({
        where,
        charges: m.charges.map((c, k) => ({ cycle: c.cycle, attempt: c.attempt, status: abandoned[k] ? 4 : c.status })),
      });
      // Charged in that order: each charge reached the acquirer after the one before it (each call is
      // a statement of its own, begun only after the charge before it was decided and the rebill moved on).
      // An abandoned charge never reached it (and is the rebill's last: it was cancelled).
      const times = got.filter((_, k) => !abandoned[k]).map((c) => c.first_call_at?.getTime() ?? NaN);
      for (let k = 1; k < times.length; k++) expect({ where, k, later: times[k] > times[k - 1] }).toEqual({ where, k, later: true });
      got.forEach((c, k) => {
        if (abandoned[k]) {
          // Abandoned: the acquirer never heard of it (no authorization, no repeat, no reversal).
          expect({ where, c: [c.cycle, c.attempt], abandoned: true, calls: c.any_calls }).toEqual({
            where,
            c: [c.cycle, c.attempt],
            abandoned: true,
            calls: 0,
          });
        } else {
          // One acquirer call per charge, approved only for an approving card.
          expect({ where, c: [c.cycle, c.attempt], first: c.first_calls, approved: c.approved_calls }).toEqual({
            where,
            c: [c.cycle, c.attempt],
            first: 1,
            approved: approves(m.kind) ? 1 : 0,
          });
        }
        // Each on its cycle's date.
        expect(c.cycle_date).toBe(cycleDate(m.dateStart, m.period, m.frequency, c.cycle));
      });
      const row = rec.row(id);
      expect({ where, open: row.open_transaction_id }).toEqual({ where, open: null });
      expect({ where, state: row.state }).toEqual({ where, state: m.state });
      if (m.state === 'cancelled') {
        expect({ where, due: row.next_due_at }).toEqual({ where, due: null });
      } else {
        expect({ where, next: [row.next_cycle, row.next_attempt, row.next_due_at?.getTime() ?? null, row.suspended_reason] }).toEqual({
          where,
          next: [m.nextCycle, m.nextAttempt, m.nextDue, m.reason ?? null],
        });
      }
    });
  }

  /** The charges a cancel's answer shows (each cycle's latest try stands for tries 0..attempt). */
  function chargesInView(view: { processor?: { payments?: Record<string, { payment: { attempt: string } }> } }): [number, number][] {
    const out: [number, number][] = [];
    for (const [cycle, p] of Object.entries(view.processor?.payments ?? {})) {
      for (let a = 0; a <= Number(p.payment.attempt); a++) out.push([Number(cycle), a]);
    }
    return out;
  }

  const pause = (ms: number) => new Promise((r) => setTimeout(r, ms));

  /** Resolves as soon as the rebill has a charge in flight (or after `timeoutMs` if it never has one). */
  async function chargeInFlight(id: string, timeoutMs: number): Promise<void> {
    const deadline = Date.now() + timeoutMs;
    while (Date.now() < deadline) {
      const { rows } = await db.query(`SELECT 1 FROM rebills WHERE id = $1 AND open_transaction_id IS NOT NULL`, [id]);
      if (rows.length) return;
      await pause(5);
    }
  }

  /** Polls `sql` (one parameter) on `c` until it returns a row; throws after `timeoutMs`. */
  async function until(c: Client, sql: string, param: string, timeoutMs = 10_000): Promise<void> {
    const deadline = Date.now() + timeoutMs;
    while (!(await c.query(sql, [param])).rows.length) {
      if (Date.now() > deadline) throw new Error(`still nothing after ${timeoutMs} ms: ${sql}`);
      await pause(5);
    }
  }

  /**
   * Sends the cancel of rebill `id` so that the tokenizer deals with its open charge between the
   * API's cancel of the rebill and its reading of the answer: rebill_cycles is locked meanwhile (the
   * answer reads it, the tokenizer's decision does not), `cancelled` lets the held charge go to the
   * queue once the rebill is cancelled, and the lock goes once that charge is decided.
   */
  async function answerLate(id: string, send: () => Promise<HttpResult>, cancelled: () => void): Promise<HttpResult> {
    const lock = new Client({ connectionString: process.env.DATABASE_URL });
    await lock.connect();
    try {
      await lock.query('BEGIN');
      await lock.query('LOCK TABLE rebill_cycles IN ACCESS EXCLUSIVE MODE');
      const answer = send();
      await until(lock, `SELECT 1 FROM rebills WHERE id = $1 AND state = 'cancelled'`, id);
      cancelled();
      await until(
        lock,
        `SELECT 1 FROM (SELECT t.status FROM rebill_cycles c JOIN transactions t ON t.id = c.transaction_id WHERE c.rebill_id = $1
           ORDER BY c.cycle DESC, c.attempt DESC LIMIT 1) last WHERE last.status <> 0`,
        id,
      );
      await lock.query('COMMIT');
      return await answer;
    } finally {
      await lock.end();
    }
  }

  class CreateRebill implements fc.AsyncCommand<Model, Real> {
    constructor(
      readonly kind: Kind,
      readonly period: RebillPeriod,
      readonly frequency: number,
      readonly startInDays: number,
      readonly spanDays: number,
    ) {}
    check = () => true;
    async run(model: Model, real: Real): Promise<void> {
      const dateStart = dateOfDay(Math.floor(model.clock / DAY_MS) + this.startInDays);
      const dateEnd = dateOfDay(Math.floor(model.clock / DAY_MS) + this.startInDays + this.spanDays);
      const res = await receiver('rebill', {
        order: { reference: `model-${++ref}`, totalAmount: 1500, period: this.period, frequency: this.frequency, dateStart, dateEnd },
        paymentCreditCard: {
          acquirer: 26,
          amount: 1500,
          currency: '986',
          country: 'BRA',
          numberOfPayments: 1,
          flag: 'visa',
          cardHolder: 'MODEL REBILL',
          cardNumber: SANDBOX_CARDS[DIGIT[this.kind]],
          cardExpirationDate: '203512',
        },
      });
      expect(res.status).toBe(200);
      // Dated after today: recorded, nothing charged yet.
      expect(res.json).toMatchObject({ status: '10', rebill: { state: 'ACTIVE', nextDate: dateStart }, processor: { payments: {} } });
      real.ids.push((res.json.transactionId as string).toLowerCase());
      model.rebills.push({
        kind: this.kind,
        period: this.period,
        frequency: this.frequency,
        dateStart,
        dateEnd,
        state: 'active',
        nextCycle: 1,
        nextAttempt: 0,
        nextDue: dueAt(dateStart).getTime(),
        charges: [],
      });
      count(`create ${this.kind}`);
      await expectModel(model, real);
    }
    toString = () => `create(${this.kind}, period ${this.period}×${this.frequency}, in ${this.startInDays} d for ${this.spanDays} d)`;
  }

  class RunDue implements fc.AsyncCommand<Model, Real> {
    constructor(
      readonly stepHours: number,
      readonly secondRunner: 'in-process' | 'cli',
      readonly delaysMs: [number, number],
      /**
       * A cancel sent while the runners charge: which rebill (modulo how many there are), and
       * when: after a pause, or (whileOpen) as soon as one of its charges is in flight.
       */
      readonly cancelDuring?: { index: number; afterMs: number; whileOpen: boolean },
      /**
       * For the fixed cases only (generated histories leave the order to chance): the in-process
       * runners keep that rebill's opened charge off the queue, so the cancel lands after the charge
       * was opened and before a tokenizer can take it. 'until-answered': until the cancel is
       * answered. 'answer-late': until the rebill is cancelled, and the cancel's answer is read
       * only once the tokenizer has dealt with the charge (see answerLate).
       */
      readonly hold?: 'until-answered' | 'answer-late',
    ) {}
    check = () => true;
    async run(model: Model, real: Real): Promise<void> {
      const asOf = model.clock + this.stepHours * 3_600_000;
      const iso = new Date(asOf).toISOString();
      const target = this.cancelDuring && model.rebills.length ? this.cancelDuring.index % model.rebills.length : undefined;
      let cancel: Promise<HttpResult> | undefined;
      if (target !== undefined) {
        const id = real.ids[target];
        const send = () => receiver('cancel', { transactionId: id.toUpperCase() });
        const when = this.cancelDuring!.whileOpen ? chargeInFlight(id, 3_000) : pause(this.cancelDuring!.afterMs);
        if (this.hold === 'answer-late') {
          let cancelled!: () => void;
          const rebillCancelled = new Promise<void>((r) => (cancelled = r));
          holdCharge = (rebillId) => (rebillId?.toLowerCase() === id ? rebillCancelled : Promise.resolve());
          cancel = when.then(() => answerLate(id, send, cancelled));
        } else {
          const answered = when.then(send);
          if (this.hold === 'until-answered')
            holdCharge = (rebillId) => (rebillId?.toLowerCase() === id ? answered.catch(() => undefined) : Promise.resolve());
          cancel = answered;
        }
      }
      const first = pause(this.delaysMs[0]).then(() => runners[0].runDue(new Date(asOf), 120_000));
      const second = pause(this.delaysMs[1]).then(() =>
        this.secondRunner === 'cli'
          ? runCli<{ open: number; opened: number }>(['rebill:run-due', '--as-of', iso, '--batch', '2'])
          : runners[1].runDue(new Date(asOf), 120_000),
      );
      const [a, b, cancelled] = await Promise.all([first, second, cancel]).finally(() => (holdCharge = noHold));
      expect([a.open, b.open]).toEqual([0, 0]);
      count(`run-due ${this.secondRunner}`);
      count('charges opened', a.opened + b.opened);

      const before = model.rebills.map((r) => r.state);
      model.rebills.forEach((r, k) => {
        const had = r.charges.length;
        chargeDue(r, asOf);
        count(`due charges ${r.kind}`, r.charges.length - had);
        if (r.state !== before[k]) count(`became ${r.state}${r.reason ? ` (${r.reason})` : ''}`);
      });
      model.clock = asOf;
      timeline = Math.max(timeline, asOf);
      if (target !== undefined && cancelled) await this.judgeCancel(model, real, target, before[target], cancelled);
      await expectModel(model, real);
    }

    /**
     * A cancel that raced the runners. Whatever the order, it is one of: done while the rebill could
     * still charge (200: the charges it shows are all there will ever be, and they are the first of
     * what the schedule charges), or after it completed (409 037), or a cancel of a cancelled one.
     *
     * A charge it shows still open (status 0; at most one, the last) is either decided as the
     * schedule says, or abandoned if the tokenizer had not sent it to the acquirer yet:
     * SalesService.authorize (apps/tokenizer/src/payments/sales.service.ts) checks
     * `req.rebill && (await this.rebills.isCancelled(req.rebill.id))` before
     * decideSale, and abandon()s the sale instead (status 4, error 101, the acquirer never called).
     * The answer is read after the rebill was cancelled, so it may already show that charge
     * abandoned (4 with 101): that is the same case.
     */
    private async judgeCancel(model: Model, real: Real, i: number, stateBefore: ModelRebill['state'], res: HttpResult): Promise<void> {
      const m = model.rebills[i];
      if (stateBefore === 'cancelled') {
        expect([res.status, res.json?.result?.error?.code]).toEqual([409, '034']);
        count('cancel during run: already cancelled');
        return;
      }
      if (res.status === 409) {
        // Only a schedule that completed by this as-of time can have been finished first.
        expect([res.json?.result?.error?.code, m.state]).toEqual(['037', 'completed']);
        count('cancel during run: finished first');
        return;
      }
      expect(res.status).toBe(200);
      expect(res.json).toMatchObject({ status: '6', rebill: { state: 'CANCELLED' } });
      const shown = chargesInView(res.json);
      // The charges the cancel saw are a prefix of what the schedule charges, and all there is.
      const full = m.charges.map((c) => [c.cycle, c.attempt]);
      expect(full.slice(0, shown.length)).toEqual(shown);
      const rec = await recorded([real.ids[i]]);
      expect(rec.charges(real.ids[i]).map((c) => [c.cycle, c.attempt])).toEqual(shown);
      m.charges = m.charges.slice(0, shown.length);
      const payments = Object.entries<{ payment: { status: string; errorCode: string; attempt: string } }>(
        (res.json as Json).processor?.payments ?? {},
      );
      const open = payments
        .filter(([, p]) => p.payment.status === '0' || (p.payment.status === '4' && p.payment.errorCode === '101'))
        .map(([cycle, p]) => [Number(cycle), Number(p.payment.attempt)]);
      if (open.length) {
        // One charge in flight at a time (the rebill's last), and nothing opened after it.
        expect(open).toEqual([shown[shown.length - 1]]);
        const last = m.charges.length - 1;
        m.charges[last] = { ...m.charges[last], openAtCancel: true };
        const c = rec.charges(real.ids[i])[last];
        count(`cancel during run: open charge ${c.status === 4 && c.error_code === '101' ? 'abandoned' : 'decided'}`);
      }
      m.state = 'cancelled';
      m.nextDue = null;
      count(`cancel during run: cancelled after ${shown.length === full.length ? 'all' : 'some'} charges`);
    }
    toString = () =>
      `runDue(+${this.stepHours} h, ${this.secondRunner}, delays ${this.delaysMs.join('/')} ms${this.cancelDuring ? `, cancel #${this.cancelDuring.index} ${this.cancelDuring.whileOpen ? 'while a charge is open' : `after ${this.cancelDuring.afterMs} ms`}` : ''}${this.hold ? `, held ${this.hold}` : ''})`;
  }

  class Cancel implements fc.AsyncCommand<Model, Real> {
    constructor(readonly index: number) {}
    check = (m: Readonly<Model>) => m.rebills.length > 0;
    async run(model: Model, real: Real): Promise<void> {
      const i = this.index % model.rebills.length;
      const m = model.rebills[i];
      const was = m.state;
      const res = await receiver('cancel', { transactionId: real.ids[i].toUpperCase() });
      if (m.state === 'cancelled') expect([res.status, res.json?.result?.error?.code]).toEqual([409, '034']);
      else if (m.state === 'completed') expect([res.status, res.json?.result?.error?.code]).toEqual([409, '037']);
      else {
        expect(res.status).toBe(200);
        expect(chargesInView(res.json)).toEqual(m.charges.map((c) => [c.cycle, c.attempt]));
        m.state = 'cancelled';
        m.nextDue = null;
      }
      count(`cancel of ${was}`);
      await expectModel(model, real);
    }
    toString = () => `cancel(#${this.index})`;
  }

  const kindArb = fc.constantFrom<Kind>('approve', 'slow-approve', 'slow-approve', 'soft', 'timeout', 'hard-blocked', 'hard-expired');
  const createArb = fc
    .record({
      kind: kindArb,
      // Daily ones most often: many charges per run, so a cancel can land between two of them.
      period: fc.constantFrom<RebillPeriod>(1, 1, 2, 3, 4),
      frequency: fc.integer({ min: 1, max: 3 }),
      startInDays: fc.integer({ min: 1, max: 10 }),
      spanDays: fc.integer({ min: 1, max: 120 }),
    })
    .map((c) => new CreateRebill(c.kind, c.period, c.frequency, c.startInDays, c.spanDays));
  const runDueArb = fc
    .record({
      stepHours: fc.oneof(
        fc.constantFrom(6, 24, 48),
        fc.integer({ min: 1, max: 60 }).map((d) => d * 24),
      ),
      secondRunner: fc.oneof(
        { weight: 3, arbitrary: fc.constant('in-process' as const) },
        { weight: 1, arbitrary: fc.constant('cli' as const) },
      ),
      delaysMs: fc.tuple(fc.integer({ min: 0, max: 150 }), fc.integer({ min: 0, max: 150 })),
      cancelDuring: fc.option(fc.record({ index: fc.nat(7), afterMs: fc.integer({ min: 0, max: 1_000 }), whileOpen: fc.boolean() }), {
        nil: undefined,
        freq: 3,
      }),
    })
    .map((r) => new RunDue(r.stepHours, r.secondRunner, r.delaysMs, r.cancelDuring));
  const cancelArb = fc.nat(7).map((i) => new Cancel(i));

  /** Runs one history from a fresh start in time; what it leaves active is cancelled after it. */
  async function runHistory(commands: Iterable<fc.AsyncCommand<Model, Real>>): Promise<void> {
    // A history of its own in time: a day after anything charged before.
    const start = (Math.floor(timeline / DAY_MS) + 2) * DAY_MS;
    const real: Real = { ids: [] };
    try {
      await fc.asyncModelRun(() => ({ model: { clock: start, rebills: [] }, real }), commands);
    } finally {
      // What it leaves active is cancelled, so no later history charges it.
      if (real.ids.length) {
        await db.query(
          `UPDATE rebills SET state = 'cancelled', next_due_at = NULL WHERE id = ANY($1) AND state IN ('active', 'suspended')`,
          [real.ids],
        );
      }
    }
  }

  const resetStats = () => Object.keys(stats).forEach((k) => delete stats[k]);

  // Issue 34: the history the property below found (seed -1146406967, path "0:8:1:28:1:16:10"),
  // command for command. The cancel lands once a runner opened the timeout rebill's first charge
  // and before a tokenizer took it (held so, here, rather than left to chance): the product
  // abandons that charge (status 4, error 101, the acquirer never called; the cancel's answer
  // shows it at status 0, and a urlReturn, had the rebill one, gets it at 4 with 101), where the
  // model had expected it decided at the acquirer.
  it('a cancel landing on a charge the tokenizer has not taken yet: abandoned, never sent to the acquirer (issue 34)', async () => {
    resetStats();
    await runHistory([
      new CreateRebill('approve', 1, 1, 3, 85),
      new CreateRebill('approve', 4, 1, 4, 39),
      new CreateRebill('timeout', 4, 2, 8, 1),
      new CreateRebill('approve', 2, 2, 1, 100),
      new Cancel(4),
      new CreateRebill('timeout', 1, 1, 2, 36),
      new RunDue(816, 'in-process', [10, 121], { index: 4, afterMs: 0, whileOpen: true }, 'until-answered'),
    ]);
    process.stdout.write(`rebill model, issue 34 history: ${JSON.stringify(stats)}\n`);
    // The case it is kept for did happen: the cancel saw the charge open, and the tokenizer abandoned it.
    expect(stats['cancel during run: open charge abandoned']).toBe(1);
  });

  // The same race, read later: the API reads the cancel's answer after it cancelled the rebill, so
  // by then the tokenizer may have abandoned the charge, and the answer shows it at 4 with 101, not
  // at 0 (the property met it: seed -532579015, path "2:40", an approving card's charge).
  it('a cancel whose answer already shows the open charge abandoned (4 with 101)', async () => {
    resetStats();
    await runHistory([
      new CreateRebill('approve', 1, 1, 1, 30),
      new RunDue(36, 'in-process', [0, 0], { index: 0, afterMs: 0, whileOpen: true }, 'answer-late'),
    ]);
    process.stdout.write(`rebill model, answer read late: ${JSON.stringify(stats)}\n`);
    expect(stats['cancel during run: open charge abandoned']).toBe(1);
  });

  it(`${RUNS} generated histories: the record is the model after every command`, async () => {
    resetStats();
    let histories = 0;
    await fc.assert(
      fc.asyncProperty(
        // Each history opens with a few rebills, then anything: weighted by repetition, creates and
        // runs more often than cancels.
        fc.array(createArb, { minLength: 1, maxLength: 4 }),
        fc.commands([createArb, createArb, runDueArb, runDueArb, runDueArb, runDueArb, cancelArb], {
          maxCommands: 8,
          size: '+1',
          replayPath: process.env.FC_REPLAY_PATH,
        }),
        async (opening, commands) => {
          histories++;
          await runHistory([...opening, ...commands]);
        },
      ),
      // No seed or path of its own: FC_SEED and FC_PATH reach fast-check's global settings.
      { numRuns: RUNS, endOnFailure: false, verbose: 1 },
    );
    process.stdout.write(`rebill model: ${histories} histories, ${JSON.stringify(stats)}\n`);
    // A replay of one path (FC_PATH) runs that history and what shrinks from it, not RUNS of them,
    // and none at all when the path cannot be walked (a shrunk fc.commands path needs its
    // replayPath too, FC_REPLAY_PATH): that must not pass as a replay. (fast-check takes a global path at run
    // time, though its GlobalParameters type leaves it out.)
    if ((fc.readConfigureGlobal() as { path?: string }).path) {
      expect({ replayedHistories: histories > 0 }).toEqual({ replayedHistories: true });
      return;
    }
    expect(histories).toBeGreaterThanOrEqual(RUNS);
    // Enough happened to mean something: 20 charges for 15 histories, as many for each history at
    // any other number of them (8 histories open fewer than 20 now and then: 17 with seed -532579015).
    expect(stats['charges opened'] ?? 0).toBeGreaterThanOrEqual(Math.ceil((20 * RUNS) / 15));
  });
});
