import { Client } from 'pg';
import type { Arrival } from './listener';
import type { Call } from './load';
import { sandboxBooks } from './books';
import type { ChaosStack, Merchant } from './stack';

/** One check's verdict: `failures` name the transactions (or requests, or files) at fault. */
export interface CheckResult {
  check: string;
  ok: boolean;
  /** What was compared, in a few words ("1 204 sales answered 200/202, each recorded once"). */
  detail: string;
  failures: string[];
}

const APPROVED = [3, 6, 8, 12];

interface RecordedTransaction {
  status: number;
  statusVersion: number;
  reference: string;
  merchant: string;
  captured: number;
  cancelled: number;
  /** A capture or cancel still holds it (its claim not settled yet). */
  held: boolean;
}

interface Recorded {
  /** Transactions of the run's merchants, by id. */
  byId: Map<string, RecordedTransaction>;
  /** How many transactions carry each (merchant public id, reference). */
  perReference: Map<string, number>;
  rebillsById: Set<string>;
  rebillsPerReference: Map<string, number>;
}

/** What the gateway recorded for the run's merchants, read as the tables' owner. */
async function readRecord(db: Client, merchantIds: string[]): Promise<Recorded> {
  const { rows } = await db.query<{
    id: string;
    status: number;
    status_version: number;
    reference: string;
    merchant: string;
    captured_amount: string;
    cancelled_amount: string;
    held: boolean;
  }>(
    `SELECT t.id, t.status, t.status_version, t.reference, m.public_id AS merchant, t.captured_amount, t.cancelled_amount,
       t.pending_operation_id IS NOT NULL AS held
     FROM transactions t JOIN merchants m ON m.id = t.merchant_id WHERE m.public_id = ANY($1)`,
    [merchantIds],
  );
  const byId = new Map(
    rows.map((r) => [
      r.id,
      {
        status: r.status,
        statusVersion: r.status_version,
        reference: r.reference,
        merchant: r.merchant,
        captured: Number(r.captured_amount),
        cancelled: Number(r.cancelled_amount),
        held: r.held,
      },
    ]),
  );
  const perReference = new Map<string, number>();
  for (const r of rows) perReference.set(`${r.merchant}/${r.reference}`, (perReference.get(`${r.merchant}/${r.reference}`) ?? 0) + 1);
  const rebills = await db.query<{ id: string; reference: string; merchant: string }>(
    `SELECT r.id, r.reference, m.public_id AS merchant FROM rebills r JOIN merchants m ON m.id = r.merchant_id WHERE m.public_id = ANY($1)`,
    [merchantIds],
  );
  const rebillsPerReference = new Map<string, number>();
  for (const r of rebills.rows)
    rebillsPerReference.set(`${r.merchant}/${r.reference}`, (rebillsPerReference.get(`${r.merchant}/${r.reference}`) ?? 0) + 1);
  return { byId, perReference, rebillsById: new Set(rebills.rows.map((r) => r.id)), rebillsPerReference };
}

/**
 * Every sale, authorization and rebill answered 200/202 is in the record exactly once, under its
 * reference and merchant, with an outcome the answer allows (an approval answered is not a
 * decline recorded); one refused (4xx) is not recorded at all; one unanswered at most once.
 */
function answeredOnce(calls: Call[], rec: Recorded): CheckResult {
  const failures: string[] = [];
  let answered = 0;
  for (const c of calls) {
    if (!c.reference) continue;
    const key = `${c.merchantId}/${c.reference}`;
    const count = c.op === 'rebill' ? (rec.rebillsPerReference.get(key) ?? 0) : (rec.perReference.get(key) ?? 0);
    if (c.http === 200 || c.http === 202) {
      answered++;
      const known = c.transactionId && (c.op === 'rebill' ? rec.rebillsById.has(c.transactionId) : rec.byId.has(c.transactionId));
      if (!known) failures.push(`${c.op} ${c.reference} answered ${c.http} as ${c.transactionId ?? '(no id)'}, which is not in the record`);
      else if (count !== 1) failures.push(`${c.op} ${c.reference} (${c.transactionId}) answered ${c.http} is recorded ${count} times`);
      else if (c.op !== 'rebill') failures.push(...outcomeKept(c, rec.byId.get(c.transactionId!)!));
    } else if (c.http >= 400 && c.http < 500 && count > 0) {
      failures.push(`${c.op} ${c.reference} was refused (${c.http} ${c.error ?? ''}) yet recorded ${count} times`);
    } else if (count > 1) {
      failures.push(`${c.op} ${c.reference} (${c.http || 'no answer'}) is recorded ${count} times`);
    }
  }
  return {
    check: 'answered sales recorded once',
    ok: failures.length === 0,
    detail: `${answered} sales, authorizations and rebills answered 200/202`,
    failures,
  };
}

/** What a sale's or authorization's answer promised still holds in the record. */
function outcomeKept(c: Call, t: RecordedTransaction): string[] {
  const id = `${c.op} ${c.reference} (${c.transactionId})`;
  if (t.reference !== c.reference || t.merchant !== c.merchantId) return [`${id} is recorded under ${t.merchant}/${t.reference}`];
  if (c.http !== 200) return [];
  // A sale is never captured or cancelled by the load; an authorization is, by the load only.
  const allowed = c.status === '3' ? [3, 8, 12, 6] : [Number(c.status)];
  return allowed.includes(t.status) ? [] : [`${id} answered status ${c.status}, recorded ${t.status}`];
}

/**
 * Captures and cancels: the record holds what their answers said, no less (and no more, unless
 * one of them went unanswered: it may have been applied).
 */
function operationsApplied(calls: Call[], rec: Recorded): CheckResult {
  const byTx = new Map<string, Call[]>();
  for (const c of calls.filter((x) => (x.op === 'capture' || x.op === 'cancel') && x.transactionId)) {
    byTx.set(c.transactionId!, [...(byTx.get(c.transactionId!) ?? []), c]);
  }
  const failures: string[] = [];
  let applied = 0;
  for (const [tx, ops] of byTx) {
    const t = rec.byId.get(tx);
    const ok = ops.filter((o) => o.http === 200);
    applied += ok.length;
    // A 409 is a refusal: nothing was done. Only no answer or a 5xx leaves the outcome open.
    const unknown = ops.some((o) => o.http === 0 || o.http >= 500);
    const captured = Math.max(0, ...ok.map((o) => o.capturedAmount ?? 0));
    const cancelled = Math.max(0, ...ok.map((o) => o.cancelledAmount ?? 0));
    if (!t) failures.push(`${tx}: captured or cancelled, and not in the record`);
    else if (unknown ? t.captured < captured || t.cancelled < cancelled : t.captured !== captured || t.cancelled !== cancelled)
      failures.push(`${tx}: answers said captured ${captured}, cancelled ${cancelled}; recorded ${t.captured}, ${t.cancelled}`);
  }
  return {
    check: 'captures and cancels applied as answered',
    ok: failures.length === 0,
    detail: `${applied} answered 200 on ${byTx.size} transactions`,
    failures,
  };
}

/** No transaction of the run is left undecided (status 0), or held by a capture or cancel. */
function allDecided(calls: Call[], rec: Recorded): CheckResult {
  const pending = [...rec.byId.entries()]
    .filter(([, t]) => t.status === 0 || t.held)
    .map(([id, t]) => `${id} (${t.reference}) ${t.held ? 'still held by a capture or cancel' : 'still at status 0'}`);
  const accepted = calls.filter((c) => c.http === 202).length;
  return {
    check: 'every 202 reached a final state',
    ok: pending.length === 0,
    detail: `${accepted} answered 202; ${rec.byId.size} transactions in all`,
    failures: pending,
  };
}

/**
 * Every status change the gateway announced (its outbox) acknowledged by the listener, signed and
 * addressed to its transaction; and, whatever the outbox holds, the listener's latest word on each
 * decided transaction is the record's: its statusVersion and status.
 */
async function webhooksDelivered(db: Client, arrivals: Arrival[], merchantIds: string[], rec: Recorded): Promise<CheckResult> {
  const { rows } = await db.query<{ tx: string; version: number }>(
    `SELECT o.aggregate_id::text AS tx, (o.payload->>'statusVersion')::int AS version
     FROM outbox o JOIN transactions t ON t.id = o.aggregate_id JOIN merchants m ON m.id = t.merchant_id
     WHERE o.event = 'transaction.status_changed' AND m.public_id = ANY($1)`,
    [merchantIds],
  );
  const acked = new Map<string, Map<number, string>>();
  const failures: string[] = [];
  for (const a of arrivals) {
    if (!a.signatureValid) failures.push(`a delivery for ${a.transactionId} v${a.statusVersion} carried no valid signature`);
    if (!a.consistent)
      failures.push(`a delivery for ${a.transactionId} v${a.statusVersion} went to another transaction's or merchant's URL`);
    if (a.answered !== 200 || !a.signatureValid || !a.consistent) continue;
    if (!acked.has(a.transactionId)) acked.set(a.transactionId, new Map());
    acked.get(a.transactionId)!.set(a.statusVersion, a.status);
  }
  for (const r of rows) {
    if (!acked.get(r.tx)?.has(r.version)) failures.push(`${r.tx}: status change v${r.version} never acknowledged by the listener`);
  }
  for (const [tx, t] of rec.byId) {
    if (t.status === 0) continue;
    const seen = acked.get(tx);
    const latest = seen ? Math.max(...seen.keys()) : 0;
    if (latest !== t.statusVersion)
      failures.push(`${tx}: the listener's latest statusVersion is ${latest || 'none'}, the record's ${t.statusVersion}`);
    else if (seen!.get(latest) !== String(t.status))
      failures.push(`${tx}: the listener's latest status is ${seen!.get(latest)}, the record's ${t.status}`);
  }
  return {
    check: 'status changes delivered, signed, in order',
    ok: failures.length === 0,
    detail: `${rows.length} status changes of ${rec.byId.size} transactions; ${arrivals.length} requests, ${arrivals.filter((a) => a.answered !== 200).length} failed on purpose`,
    failures,
  };
}

/** Every rebill cycle approved at most once; and every cycle rebill:run-due made due was charged. */
async function rebillCycles(db: Client, merchantIds: string[], runsDue: RunDue[]): Promise<CheckResult> {
  const { rows } = await db.query<{ rebill_id: string; cycle: number; charges: number; approved: number }>(
    `SELECT rc.rebill_id, rc.cycle, count(*)::int AS charges, count(*) FILTER (WHERE t.status = ANY($2))::int AS approved
     FROM rebill_cycles rc JOIN transactions t ON t.id = rc.transaction_id JOIN merchants m ON m.id = t.merchant_id
     WHERE m.public_id = ANY($1) GROUP BY 1, 2`,
    [merchantIds, APPROVED],
  );
  const failures = rows.filter((r) => r.approved > 1).map((r) => `rebill ${r.rebill_id} cycle ${r.cycle} charged ${r.approved} times`);
  // A rebill made before a run-due, its first cycle approved, had its next cycles charged by it.
  for (const run of runsDue) {
    const missed = await db.query<{ id: string; cycles: number }>(
      `SELECT r.id, count(DISTINCT rc.cycle)::int AS cycles FROM rebills r JOIN merchants m ON m.id = r.merchant_id
         JOIN rebill_cycles rc ON rc.rebill_id = r.id
       WHERE m.public_id = ANY($1) AND r.created_at < $2
         AND EXISTS (SELECT 1 FROM rebill_cycles c1 JOIN transactions t ON t.id = c1.transaction_id
                     WHERE c1.rebill_id = r.id AND c1.cycle = 1 AND t.status = ANY($4))
       GROUP BY r.id HAVING count(DISTINCT rc.cycle) < $3`,
      [merchantIds, new Date(run.startedAt), run.cycles, APPROVED],
    );
    for (const r of missed.rows)
      failures.push(`rebill ${r.id}: ${r.cycles} cycles charged, ${run.cycles} due by rebill:run-due --as-of ${run.asOf}`);
  }
  return {
    check: 'rebill cycles charged once when due',
    ok: failures.length === 0,
    detail: `${rows.length} cycles, ${rows.reduce((s, r) => s + r.charges, 0)} charges; ${runsDue.length} rebill:run-due passes`,
    failures,
  };
}

/** When rebill:run-due ran (successfully) and how many cycles each rebill made before it has due by then. */
export interface RunDue {
  startedAt: number;
  asOf: string;
  cycles: number;
}

/**
 * A 5xx other than the documented 503 is a failure; so is a request left unanswered while the api
 * replica it went to was up, and an answer holding card data. The 503s are counted.
 */
function answersHonest(calls: Call[], apiDown: (api: string, from: number, to: number) => boolean): CheckResult {
  const failures = [
    ...calls
      .filter((c) => c.http >= 500 && c.http !== 503)
      .map((c) => `${c.op} ${c.reference ?? c.transactionId ?? ''} answered ${c.http}: ${c.error ?? ''}`),
    ...calls
      .filter((c) => c.http === 0 && !apiDown(c.api, c.startedAt, c.endedAt))
      .map((c) => `${c.op} ${c.reference ?? c.transactionId ?? ''} got no answer from ${c.api}, which was up: ${c.error ?? ''}`),
    ...calls.filter((c) => c.leaked).map((c) => `the answer to ${c.op} ${c.reference ?? c.transactionId ?? ''} held card data`),
  ].map((f) => f.replace(/\s+/g, ' '));
  const unavailable = calls.filter((c) => c.http === 503).length;
  const unanswered = calls.filter((c) => c.http === 0).length;
  return {
    check: 'no 5xx but the documented 503',
    ok: failures.length === 0,
    detail: `${calls.length} requests: ${unavailable} answered 503, ${unanswered} unanswered by a replica that was down`,
    failures,
  };
}

/** Every check that reads the record; the CLI ones and the log scan are run by the caller. */
export async function recordChecks(
  stack: ChaosStack,
  calls: Call[],
  arrivals: Arrival[],
  merchants: Merchant[],
  runsDue: RunDue[],
  apiDown: (api: string, from: number, to: number) => boolean,
): Promise<CheckResult[]> {
  const db = new Client({ connectionString: stack.env.DATABASE_URL });
  await db.connect();
  try {
    const ids = merchants.map((m) => m.merchantId);
    const rec = await readRecord(db, ids);
    const leaked = arrivals.filter((a) => a.leaked).map((a) => `a webhook for ${a.transactionId} v${a.statusVersion} held card data`);
    const hooks = await webhooksDelivered(db, arrivals, ids, rec);
    return [
      answeredOnce(calls, rec),
      operationsApplied(calls, rec),
      allDecided(calls, rec),
      { ...hooks, ok: hooks.ok && leaked.length === 0, failures: [...hooks.failures, ...leaked] },
      await rebillCycles(db, ids, runsDue),
      await sandboxBooks(db),
      answersHonest(calls, apiDown),
    ];
  } finally {
    await db.end();
  }
}

/** What the drain waits for: nothing undecided or held, every announced change acknowledged. */
export async function outstanding(
  stack: ChaosStack,
  arrivals: Arrival[],
  merchants: Merchant[],
): Promise<{ undecided: number; unacknowledged: number }> {
  const db = new Client({ connectionString: stack.env.DATABASE_URL, connectionTimeoutMillis: 5_000 });
  await db.connect();
  try {
    const ids = merchants.map((m) => m.merchantId);
    const rec = await readRecord(db, ids);
    const hooks = await webhooksDelivered(db, arrivals, ids, rec);
    return { undecided: [...rec.byId.values()].filter((t) => t.status === 0 || t.held).length, unacknowledged: hooks.failures.length };
  } finally {
    await db.end();
  }
}
