import { randomBytes } from 'node:crypto';
import { Client } from 'pg';
import { SANDBOX_CARDS } from '../fixtures/cards';
import { eventually, HttpResult, MerchantCredentials, post, runCliRaw } from './stack';

/**
 * What the money-operation suites share: sending operations as a merchant would, and reading what
 * the gateway recorded beside what the sandbox acquirer did, so each test can check they agree.
 */

// eslint-disable-next-line @typescript-eslint/no-explicit-any
export type Json = Record<string, any>;

export function receiverOf(baseUrl: string, m: MerchantCredentials) {
  return (op: string, body: unknown, headers: Record<string, string> = {}): Promise<HttpResult> =>
    post(
      baseUrl,
      '/v1/receiver',
      { 'transaction-request': { version: '1.0.0', verification: { merchantId: m.merchantId, merchantKey: m.merchantKey }, [op]: body } },
      headers,
    );
}

// Unique across the run: jest gives each test file fresh module state (the counter restarts) in
// one process (the same pid), and the suites share one database.
const run = randomBytes(4).toString('hex');
let ref = 0;

/** A sale or authorization body for an approving sandbox card, with a listener so webhooks are due. */
export function saleBody(amount: number, listener = 'https://merchant.example/listener'): Json {
  return {
    order: { reference: `M-${run}-${++ref}`, totalAmount: amount },
    payment: {
      acquirer: 26,
      method: 1,
      amount,
      currency: '986',
      country: 'BRA',
      numberOfPayments: 1,
      flag: 'visa',
      cardHolder: 'MODEL CHECK',
      cardNumber: SANDBOX_CARDS[1],
      cardSecurityCode: '0917',
      cardExpirationDate: '203012',
    },
    urlReturn: listener,
  };
}

/** What the gateway recorded of a transaction, its claim and its events. */
export interface Recorded {
  status: number;
  statusVersion: number;
  captured: number;
  cancelled: number;
  chargedBack: number;
  held: boolean;
  tid: string;
  /** Events written to the outbox, by name. */
  events: Record<string, number>;
  /** The transaction's capture and cancel operations, by state. */
  operations: Record<string, number>;
}

/** What the sandbox acquirer did for an authorization (first calls only: repeats act on nothing). */
export interface Books {
  captured: number;
  cancelled: number;
  /** Approved capture and cancel calls, each with its amount. */
  calls: { kind: string; amount: number }[];
}

export class MoneyDb {
  private constructor(private readonly db: Client) {}

  static async connect(databaseUrl = process.env.DATABASE_URL): Promise<MoneyDb> {
    const db = new Client({ connectionString: databaseUrl });
    await db.connect();
    return new MoneyDb(db);
  }

  close(): Promise<void> {
    return this.db.end();
  }

  query<T extends object>(text: string, values: unknown[] = []): Promise<T[]> {
    return this.db.query<T>(text, values).then((r) => r.rows);
  }

  async recorded(transactionId: string): Promise<Recorded> {
    const id = transactionId.toLowerCase();
    const [t] = await this.query<Json>(
      `SELECT status, status_version, captured_amount, cancelled_amount, charged_back_amount, pending_operation_id, processor->>'tid' AS tid FROM transactions WHERE id = $1`,
      [id],
    );
    const events = await this.query<{ event: string; n: string }>(
      'SELECT event, count(*) AS n FROM outbox WHERE aggregate_id = $1 GROUP BY event',
      [id],
    );
    const ops = await this.query<{ state: string; n: string }>(
      'SELECT state, count(*) AS n FROM transaction_operations WHERE transaction_id = $1 GROUP BY state',
      [id],
    );
    return {
      status: t.status,
      statusVersion: t.status_version,
      captured: Number(t.captured_amount),
      cancelled: Number(t.cancelled_amount),
      chargedBack: Number(t.charged_back_amount),
      held: t.pending_operation_id !== null,
      tid: t.tid,
      events: Object.fromEntries(events.map((e) => [e.event, Number(e.n)])),
      operations: Object.fromEntries(ops.map((o) => [o.state, Number(o.n)])),
    };
  }

  async books(tid: string): Promise<Books> {
    const rows = await this.query<{ kind: string; capture: boolean; amount: string; outcome: string }>(
      `SELECT kind, capture, amount, result->>'outcome' AS outcome FROM sandbox_calls WHERE tid = $1 AND NOT repeat ORDER BY id`,
      [tid],
    );
    const approved = rows.filter((r) => r.outcome === 'approved');
    const sum = (kind: string) => approved.filter((r) => r.kind === kind).reduce((a, r) => a + Number(r.amount), 0);
    const sale = approved.filter((r) => r.kind === 'authorize' && r.capture).reduce((a, r) => a + Number(r.amount), 0);
    return {
      captured: sale + sum('capture'),
      cancelled: sum('cancel'),
      calls: approved.filter((r) => r.kind === 'capture' || r.kind === 'cancel').map((r) => ({ kind: r.kind, amount: Number(r.amount) })),
    };
  }

  /** Waits until settlement has caught up with a transaction's captures, cancels and chargebacks. */
  async settled(transactionId: string): Promise<void> {
    const id = transactionId.toLowerCase();
    await eventually(
      async () => {
        const [r] = await this.query<{ ok: boolean }>(
          `SELECT (t.captured_amount = 0 AND s.transaction_id IS NULL) OR (s.gross = t.captured_amount AND s.cancelled = t.cancelled_amount AND s.charged_back = t.charged_back_amount) AS ok
         FROM transactions t LEFT JOIN settlements s ON s.transaction_id = t.id WHERE t.id = $1`,
          [id],
        );
        if (!r?.ok) throw new Error(`settlement of ${transactionId} has not caught up`);
      },
      { timeoutMs: 20_000 },
    );
  }
}

/**
 * acquirer:reconcile and ledger:verify for one merchant, as an operator runs them: both must exit 0
 * with no difference (settlement is asynchronous, so the ledger is given time to catch up).
 * Resolves with how many transactions the reconciliation compared.
 */
export async function expectReconciled(merchantId: string, env: Record<string, string> = {}): Promise<number> {
  const { reconcile, ledger } = await eventually(
    async () => {
      const both = {
        reconcile: await runCliRaw<Json>(['acquirer:reconcile', '--merchant', merchantId], env),
        ledger: await runCliRaw<Json>(['ledger:verify', '--merchant', merchantId], env),
      };
      expect(both.ledger.json?.differences).toEqual([]);
      return both;
    },
    { timeoutMs: 60_000, intervalMs: 1_000 },
  );
  expect({ code: reconcile.code, differences: reconcile.json?.differences, stderr: reconcile.stderr }).toEqual({
    code: 0,
    differences: [],
    stderr: '',
  });
  expect(ledger.code).toBe(0);
  return reconcile.json!.transactions;
}
