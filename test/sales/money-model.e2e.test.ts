import 'reflect-metadata';
import fc from 'fast-check';
import { DataSource } from 'typeorm';
import { DomainError } from '@app/contracts';
import { dataSourceOptions, LedgerRepository } from '@app/persistence';
import { CaptureSettlement, ChargebackSettlement } from '@app/settlement';
import { expectReconciled, Json, MoneyDb, receiverOf, saleBody } from '../support/money';
import { createMerchant, MerchantCredentials, Stack, startStack } from '../support/stack';

jest.setTimeout(900_000);

const HISTORIES = Number(process.env.MONEY_MODEL_RUNS ?? 100);

/**
 * Model-based check of linearizability. fast-check generates histories: a sale or an
 * authorization, then bursts of operations (full or partial captures and cancels, reports,
 * chargebacks, with amounts that sometimes overflow) sent at once, in an order its scheduler
 * picks. After each burst, some serial order of the burst's operations must explain every answer
 * (each 200 is the state right after its operation, each refusal is what the state at its turn
 * implies, each report a state in between), and the record must be the state that order ends in.
 * After each history the acquirer's books equal the record and each applied change has its events.
 */

interface ModelState {
  amount: number;
  status: number;
  captured: number;
  cancelled: number;
  chargedBack: number;
}

type OpSpec = { kind: 'capture' | 'cancel'; amount?: number } | { kind: 'chargeback'; amount: number } | { kind: 'report' };

/**
 * What came back: `ok` with the state the answer shows, or a refusal by its HTTP status; `retry`
 * marks "nothing was done, retry" (409 038, 503), which depends on timing, not on the state.
 */
type Observed =
  | { ok: true; view?: Pick<ModelState, 'status' | 'captured' | 'cancelled'>; chargedBack?: number }
  | { ok: false; http: number; retry?: true };

/** The model's verdict on an operation in a state: the state after it, or the refusal's HTTP status. */
function step(s: ModelState, op: OpSpec): { next: ModelState } | { refused: number } {
  switch (op.kind) {
    case 'report':
      return { next: s };
    case 'capture': {
      if (s.status !== 3) return { refused: 409 };
      const amount = op.amount ?? s.amount;
      if (amount > s.amount) return { refused: 400 };
      return { next: { ...s, status: 8, captured: amount } };
    }
    case 'cancel': {
      if (![3, 8, 12].includes(s.status)) return { refused: 409 };
      const base = s.status === 3 || s.captured === 0 ? s.amount : s.captured;
      const left = base - s.cancelled - s.chargedBack;
      if (left <= 0) return { refused: 409 };
      const amount = op.amount ?? left;
      if (amount > left) return { refused: 400 };
      const cancelled = s.cancelled + amount;
      return { next: { ...s, cancelled, status: cancelled === base ? 6 : 12 } };
    }
    case 'chargeback': {
      if (s.captured === 0) return { refused: 404 };
      if (op.amount > s.captured - s.cancelled - s.chargedBack) return { refused: 400 };
      return { next: { ...s, chargedBack: s.chargedBack + op.amount } };
    }
  }
}

const sameView = (s: ModelState, v: Pick<ModelState, 'status' | 'captured' | 'cancelled'>) =>
  s.status === v.status && s.captured === v.captured && s.cancelled === v.cancelled;

/**
 * The serial orders of `ops` that explain every observation, from `from`; returns the end state
 * of the first one found, or undefined when none does. A 409 038 or 503 is "not done, retry":
 * it must change nothing, wherever it sits.
 */
export function linearize(from: ModelState, ops: OpSpec[], seen: Observed[]): ModelState[] {
  const ends: ModelState[] = [];
  const placed = new Array<boolean>(ops.length).fill(false);
  const walk = (s: ModelState, left: number): void => {
    if (left === 0) {
      ends.push(s);
      return;
    }
    for (let i = 0; i < ops.length; i++) {
      if (placed[i]) continue;
      const o = seen[i];
      const verdict = step(s, ops[i]);
      let next: ModelState | undefined;
      if (!o.ok && o.retry) next = s;
      else if ('next' in verdict && o.ok) {
        const fits =
          (o.view === undefined || sameView(verdict.next, o.view)) &&
          (o.chargedBack === undefined || o.chargedBack === verdict.next.chargedBack);
        if (fits) next = verdict.next;
      } else if ('refused' in verdict && !o.ok && verdict.refused === o.http) next = s;
      if (!next) continue;
      placed[i] = true;
      walk(next, left - 1);
      placed[i] = false;
      if (ends.length) return;
    }
  };
  walk(from, ops.length);
  return ends;
}

describe('money operations: model-based linearizability over HTTP', () => {
  let stack: Stack;
  let shop: MerchantCredentials;
  let db: MoneyDb;
  let ledgerDb: DataSource;
  let chargebacks: ChargebackSettlement;
  let receiver: ReturnType<typeof receiverOf>;

  beforeAll(async () => {
    stack = await startStack({ OPERATION_WAIT_MS: '8000' });
    shop = await createMerchant('money model shop');
    receiver = receiverOf(stack.baseUrl, shop);
    db = await MoneyDb.connect();
    // Chargebacks go through the very code chargeback:record runs, in process (a CLI start per
    // chargeback would make the suite minutes longer).
    ledgerDb = await new DataSource(dataSourceOptions(process.env.DATABASE_URL!, 4)).initialize();
    const ledger = new LedgerRepository(ledgerDb);
    chargebacks = new ChargebackSettlement(ledger, new CaptureSettlement(ledger));
  });

  afterAll(async () => {
    await ledgerDb?.destroy();
    await db?.close();
    await stack?.stop();
  });

  /** What the generated histories did, so a run that tested little cannot pass quietly. */
  const stats: Record<string, number> = {};
  const count = (what: string) => (stats[what] = (stats[what] ?? 0) + 1);

  async function send(id: string, op: OpSpec): Promise<Observed> {
    const seen = await sendOnce(id, op);
    count(`${op.kind} ${seen.ok ? 'ok' : seen.retry ? 'retry' : seen.http}`);
    return seen;
  }

  async function sendOnce(id: string, op: OpSpec): Promise<Observed> {
    if (op.kind === 'chargeback') {
      try {
        const r = await chargebacks.record(id.toLowerCase(), op.amount);
        return { ok: true, chargedBack: r.chargedBack };
      } catch (e) {
        if (e instanceof DomainError) return { ok: false, http: e.kind === 'not_found' ? 404 : 400 };
        throw e;
      }
    }
    const body =
      op.kind === 'report' ? { transactionId: id } : { transactionId: id, ...(op.amount !== undefined ? { amount: op.amount } : {}) };
    const res = await receiver(op.kind, body);
    if (res.status !== 200) {
      const code = res.json?.result?.error?.code;
      return res.status === 503 || code === '038' ? { ok: false, http: res.status, retry: true } : { ok: false, http: res.status };
    }
    const v: Json = res.json;
    return {
      ok: true,
      view: { status: Number(v.status), captured: Number(v.processor.capturedAmount), cancelled: Number(v.processor.cancelledAmount) },
    };
  }

  interface Real {
    id: string;
    scheduler: fc.Scheduler;
    applied: { captures: number; cancels: number };
  }

  class Burst implements fc.AsyncCommand<{ state: ModelState }, Real> {
    constructor(readonly ops: OpSpec[]) {}
    check(): boolean {
      return true;
    }
    async run(model: { state: ModelState }, real: Real): Promise<void> {
      // All sent at once; the scheduler decides the order they leave in.
      const answers = this.ops.map((op) => real.scheduler.schedule(Promise.resolve(op), `${op.kind}`).then((o) => send(real.id, o)));
      await real.scheduler.waitAll();
      const seen = await Promise.all(answers);
      const recorded = await db.recorded(real.id);
      const ends = linearize(model.state, this.ops, seen);
      const observed = {
        status: recorded.status,
        captured: recorded.captured,
        cancelled: recorded.cancelled,
        chargedBack: recorded.chargedBack,
      };
      const explained = ends.find(
        (e) =>
          e.status === observed.status &&
          e.captured === observed.captured &&
          e.cancelled === observed.cancelled &&
          e.chargedBack === observed.chargedBack,
      );
      if (!explained) {
        throw new Error(
          `no serial order explains the burst: from ${JSON.stringify(model.state)}, ops ${JSON.stringify(this.ops)}, answers ${JSON.stringify(seen)}, record ${JSON.stringify(observed)}`,
        );
      }
      for (let i = 0; i < this.ops.length; i++) {
        const op = this.ops[i];
        if (seen[i].ok && (op.kind === 'capture' || op.kind === 'cancel')) real.applied[op.kind === 'capture' ? 'captures' : 'cancels']++;
      }
      model.state = { ...observed, amount: model.state.amount };
    }
    toString(): string {
      return `burst(${this.ops.map((o) => (o.kind === 'report' ? 'report' : `${o.kind} ${'amount' in o && o.amount !== undefined ? o.amount : 'full'}`)).join(', ')})`;
    }
  }

  // Mostly amounts that fit a 1 000–10 000 transaction a few times over, sometimes ones that overflow it.
  const amountArb = fc.oneof(
    { weight: 3, arbitrary: fc.integer({ min: 1, max: 2_500 }) },
    { weight: 1, arbitrary: fc.integer({ min: 1, max: 12_000 }) },
  );
  const opArb: fc.Arbitrary<OpSpec> = fc.oneof(
    {
      weight: 4,
      arbitrary: fc.record({
        kind: fc.constantFrom('capture' as const, 'cancel' as const),
        amount: fc.option(amountArb, { nil: undefined, freq: 4 }),
      }),
    },
    { weight: 1, arbitrary: fc.record({ kind: fc.constant('chargeback' as const), amount: amountArb }) },
    { weight: 1, arbitrary: fc.constant({ kind: 'report' as const }) },
  );

  it(`${HISTORIES} generated histories: every answer is explained by one serial order, and the acquirer agrees`, async () => {
    let ran = 0;
    await fc.assert(
      fc.asyncProperty(
        fc.oneof({ weight: 2, arbitrary: fc.constant('authorize' as const) }, { weight: 1, arbitrary: fc.constant('sale' as const) }),
        fc.integer({ min: 1_000, max: 10_000 }),
        fc.commands([fc.array(opArb, { minLength: 1, maxLength: 6 }).map((ops) => new Burst(ops))], {
          maxCommands: 4,
          replayPath: process.env.FC_REPLAY_PATH,
        }),
        fc.scheduler(),
        async (start, amount, commands, scheduler) => {
          ran++;
          const res = await receiver(start, saleBody(amount));
          if (res.json?.status !== (start === 'sale' ? '8' : '3')) throw new Error(`${start} answered ${res.status} ${res.text}`);
          const id: string = res.json.transactionId;
          const state: ModelState = {
            amount,
            status: start === 'sale' ? 8 : 3,
            captured: start === 'sale' ? amount : 0,
            cancelled: 0,
            chargedBack: 0,
          };
          const real: Real = { id, scheduler, applied: { captures: 0, cancels: 0 } };
          await fc.asyncModelRun(() => ({ model: { state }, real }), commands);

          const r = await db.recorded(id);
          const books = await db.books(r.tid);
          if (r.held) throw new Error(`transaction ${id} is still held`);
          if (books.captured !== r.captured || books.cancelled !== r.cancelled) {
            throw new Error(`acquirer ${JSON.stringify(books)} vs record ${JSON.stringify(r)}`);
          }
          const captureCalls = books.calls.filter((c) => c.kind === 'capture').length;
          const cancelCalls = books.calls.filter((c) => c.kind === 'cancel').length;
          if (captureCalls !== real.applied.captures || cancelCalls !== real.applied.cancels) {
            throw new Error(
              `acquirer ran ${captureCalls} captures and ${cancelCalls} cancels; ${JSON.stringify(real.applied)} were answered 200`,
            );
          }
          const events = r.events;
          const expectedEvents = {
            'transaction.status_changed': r.statusVersion - 1,
            'transaction.captured': real.applied.captures + (start === 'sale' ? 1 : 0),
            'transaction.cancelled': real.applied.cancels,
          };
          for (const [name, n] of Object.entries(expectedEvents)) {
            if ((events[name] ?? 0) !== n) throw new Error(`${name}: ${events[name] ?? 0} events for ${n} changes`);
          }
        },
      ),
      { numRuns: HISTORIES, endOnFailure: false, verbose: 1 },
    );
    expect(ran).toBeGreaterThanOrEqual(HISTORIES);
    process.stdout.write(`model histories: ${ran}, operations by outcome: ${JSON.stringify(stats)}\n`);
    // The histories exercised both sides of every rule: applied and refused captures and cancels, chargebacks.
    for (const kind of ['capture ok', 'capture 409', 'cancel ok', 'cancel 400', 'cancel 409', 'chargeback ok', 'report ok'])
      expect(stats[kind] ?? 0).toBeGreaterThan(0);
  });

  it('then acquirer:reconcile and ledger:verify are clean for every transaction of the run', async () => {
    expect(await expectReconciled(shop.merchantId)).toBeGreaterThanOrEqual(HISTORIES);
  });
});

describe('the linearizability checker itself', () => {
  const authorized: ModelState = { amount: 10_000, status: 3, captured: 0, cancelled: 0, chargedBack: 0 };

  it('explains capture-then-cancel and cancel-then-refused-capture', () => {
    const ops: OpSpec[] = [
      { kind: 'capture', amount: 300 },
      { kind: 'cancel', amount: 300 },
    ];
    expect(
      linearize(authorized, ops, [
        { ok: true, view: { status: 8, captured: 300, cancelled: 0 } },
        { ok: true, view: { status: 6, captured: 300, cancelled: 300 } },
      ]),
    ).toHaveLength(1);
    expect(
      linearize(authorized, ops, [
        { ok: false, http: 409 },
        { ok: true, view: { status: 12, captured: 0, cancelled: 300 } },
      ]),
    ).toHaveLength(1);
  });

  it('rejects the old bug: two 200s for cancels of which only one was recorded', () => {
    const sale: ModelState = { amount: 10_000, status: 8, captured: 10_000, cancelled: 0, chargedBack: 0 };
    const ops: OpSpec[] = [
      { kind: 'cancel', amount: 300 },
      { kind: 'cancel', amount: 300 },
    ];
    const seen: Observed[] = [
      { ok: true, view: { status: 12, captured: 10_000, cancelled: 300 } },
      { ok: true, view: { status: 12, captured: 10_000, cancelled: 300 } },
    ];
    expect(linearize(sale, ops, seen)).toEqual([]);
  });

  it('rejects a 200 for a capture whose cancel won (the capture was not applied)', () => {
    const ops: OpSpec[] = [
      { kind: 'capture', amount: 300 },
      { kind: 'cancel', amount: 300 },
    ];
    const seen: Observed[] = [
      { ok: true, view: { status: 8, captured: 300, cancelled: 0 } },
      { ok: true, view: { status: 12, captured: 0, cancelled: 300 } },
    ];
    expect(linearize(authorized, ops, seen)).toEqual([]);
  });
});
