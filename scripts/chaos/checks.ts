import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { Client } from 'pg';
import type { Arrival } from './listener';
import type { Call } from './load';
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

interface Recorded {
  /** Transactions of the run's merchants, by id. */
  byId: Map<string, { status: number; statusVersion: number; reference: string; merchant: string }>;
  /** How many transactions carry each (merchant public id, reference). */
  perReference: Map<string, number>;
  rebillsById: Set<string>;
  rebillsPerReference: Map<string, number>;
}

/** What the gateway recorded for the run's merchants, read as the tables' owner. */
async function readRecord(db: Client, merchantIds: string[]): Promise<Recorded> {
  const { rows } = await db.query<{ id: string; status: number; status_version: number; reference: string; merchant: string }>(
    `SELECT t.id, t.status, t.status_version, t.reference, m.public_id AS merchant
     FROM transactions t JOIN merchants m ON m.id = t.merchant_id WHERE m.public_id = ANY($1)`,
    [merchantIds],
  );
  const byId = new Map(
    rows.map((r) => [r.id, { status: r.status, statusVersion: r.status_version, reference: r.reference, merchant: r.merchant }]),
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
 * Every sale, authorization and rebill answered 200/202 is in the record exactly once; one refused
 * (4xx) is not at all; one unanswered at most once.
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

/** No transaction of the run is left undecided (status 0): every 202 and every retried sale reached a final state. */
function allDecided(calls: Call[], rec: Recorded): CheckResult {
  const pending = [...rec.byId.entries()].filter(([, t]) => t.status === 0).map(([id, t]) => `${id} (${t.reference}) still at status 0`);
  const accepted = calls.filter((c) => c.http === 202).length;
  return {
    check: 'every 202 reached a final state',
    ok: pending.length === 0,
    detail: `${accepted} answered 202; ${rec.byId.size} transactions in all`,
    failures: pending,
  };
}

/**
 * The status changes the gateway announced (its outbox), each acknowledged by the listener, signed;
 * the listener's last word per transaction is the record's.
 */
async function webhooksDelivered(db: Client, arrivals: Arrival[], merchantIds: string[]): Promise<CheckResult> {
  const { rows } = await db.query<{ tx: string; version: number }>(
    `SELECT o.aggregate_id::text AS tx, (o.payload->>'statusVersion')::int AS version
     FROM outbox o JOIN transactions t ON t.id = o.aggregate_id JOIN merchants m ON m.id = t.merchant_id
     WHERE o.event = 'transaction.status_changed' AND m.public_id = ANY($1) AND coalesce(o.payload->>'urlReturn', '') <> ''`,
    [merchantIds],
  );
  const acked = new Map<string, Set<number>>();
  const failures: string[] = [];
  for (const a of arrivals) {
    if (!a.signatureValid) failures.push(`a delivery for ${a.transactionId} v${a.statusVersion} carried no valid signature`);
    if (a.answered !== 200 || !a.signatureValid) continue;
    if (!acked.has(a.transactionId)) acked.set(a.transactionId, new Set());
    acked.get(a.transactionId)!.add(a.statusVersion);
  }
  const lastRecorded = new Map<string, number>();
  for (const r of rows) {
    lastRecorded.set(r.tx, Math.max(lastRecorded.get(r.tx) ?? 0, r.version));
    if (!acked.get(r.tx)?.has(r.version)) failures.push(`${r.tx}: status change v${r.version} never acknowledged by the listener`);
  }
  for (const [tx, last] of lastRecorded) {
    const seen = Math.max(...(acked.get(tx) ?? [0]));
    if (seen !== last) failures.push(`${tx}: the listener's latest statusVersion is ${seen || 'none'}, the record's ${last}`);
  }
  return {
    check: 'status changes delivered, signed, in order',
    ok: failures.length === 0,
    detail: `${rows.length} status changes of ${lastRecorded.size} transactions; ${arrivals.length} requests, ${arrivals.filter((a) => a.answered !== 200).length} failed on purpose`,
    failures,
  };
}

/** Every rebill cycle approved at most once. */
async function rebillCyclesOnce(db: Client, merchantIds: string[]): Promise<CheckResult> {
  const { rows } = await db.query<{ rebill_id: string; cycle: number; charges: number; approved: number }>(
    `SELECT rc.rebill_id, rc.cycle, count(*)::int AS charges, count(*) FILTER (WHERE t.status = ANY($2))::int AS approved
     FROM rebill_cycles rc JOIN transactions t ON t.id = rc.transaction_id JOIN merchants m ON m.id = t.merchant_id
     WHERE m.public_id = ANY($1) GROUP BY 1, 2`,
    [merchantIds, APPROVED],
  );
  const failures = rows.filter((r) => r.approved > 1).map((r) => `rebill ${r.rebill_id} cycle ${r.cycle} charged ${r.approved} times`);
  return {
    check: 'rebill cycles charged at most once',
    ok: failures.length === 0,
    detail: `${rows.length} cycles, ${rows.reduce((s, r) => s + r.charges, 0)} charges`,
    failures,
  };
}

/** A 5xx other than the documented 503 is a failure; the 503s are counted. */
function noUnexpected5xx(calls: Call[]): CheckResult {
  const failures = calls
    .filter((c) => c.http >= 500 && c.http !== 503)
    .map((c) => `${c.op} ${c.reference ?? ''} answered ${c.http}: ${c.error ?? ''}`.replace(/\s+/g, ' '));
  const unavailable = calls.filter((c) => c.http === 503).length;
  const unanswered = calls.filter((c) => c.http === 0).length;
  return {
    check: 'no 5xx but the documented 503',
    ok: failures.length === 0,
    detail: `${calls.length} requests: ${unavailable} answered 503, ${unanswered} unanswered (the replica died)`,
    failures,
  };
}

/** acquirer:reconcile or ledger:verify: clean, or each difference named. */
export async function cliCheck(stack: ChaosStack, check: string, args: string[]): Promise<CheckResult> {
  const r = await stack.cliRaw<{ transactions?: number; differences?: unknown[] }>(args);
  if (!r.json || !Array.isArray(r.json.differences)) {
    return {
      check,
      ok: false,
      detail: `${args[0]} did not answer`,
      failures: [`exit ${r.code}: ${(r.stderr || r.stdout).trim().split('\n').pop()}`],
    };
  }
  const failures = r.json.differences.map((d) => JSON.stringify(d));
  return { check, ok: failures.length === 0 && r.code === 0, detail: `${r.json.transactions ?? '?'} transactions compared`, failures };
}

/** No card number, security code or secret of the run in any log (the apps', the launcher's, the simulators', the servers'). */
export function logsClean(dirs: string[], secrets: { label: string; text: string }[]): CheckResult {
  const failures: string[] = [];
  let files = 0;
  const walk = (dir: string): string[] =>
    readdirSync(dir).flatMap((name) => {
      const p = join(dir, name);
      const s = statSync(p);
      return s.isDirectory() ? (name === 'pg' && dir === dirs[0] ? [] : walk(p)) : /\.log(\.\d+)?$/.test(name) ? [p] : [];
    });
  for (const file of dirs.flatMap(walk)) {
    files++;
    const text = readFileSync(file, 'utf8');
    for (const s of secrets) {
      const found =
        s.label === 'security code' ? new RegExp(`(?<![0-9A-Za-z+/=_.-])${s.text}(?![0-9A-Za-z+/=_.-])`).test(text) : text.includes(s.text);
      if (found) failures.push(`${file}: holds a ${s.label}`);
    }
  }
  return {
    check: 'no card number or secret in any log',
    ok: failures.length === 0,
    detail: `${files} log files, ${secrets.length} values looked for`,
    failures,
  };
}

/** Every check that reads the record; the CLI ones and the log scan are run by the caller. */
export async function recordChecks(stack: ChaosStack, calls: Call[], arrivals: Arrival[], merchants: Merchant[]): Promise<CheckResult[]> {
  const db = new Client({ connectionString: stack.env.DATABASE_URL });
  await db.connect();
  try {
    const ids = merchants.map((m) => m.merchantId);
    const rec = await readRecord(db, ids);
    return [
      answeredOnce(calls, rec),
      allDecided(calls, rec),
      await webhooksDelivered(db, arrivals, ids),
      await rebillCyclesOnce(db, ids),
      noUnexpected5xx(calls),
    ];
  } finally {
    await db.end();
  }
}

/** What the drain waits for: nothing undecided, every announced change acknowledged. */
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
    const hooks = await webhooksDelivered(db, arrivals, ids);
    return { undecided: [...rec.byId.values()].filter((t) => t.status === 0).length, unacknowledged: hooks.failures.length };
  } finally {
    await db.end();
  }
}
