import { Client } from 'pg';

/** What the bench reads back of a drain: the charges made, the scheduler's batches, the commits. */
/**
 * The charges as the scheduler opened them (one opening transaction each, told apart by its
 * timestamp, which is when that transaction began: its own statements count in the batch's time):
 * how many, how long from a batch's opening transaction's start until its last rebill moved on,
 * and how long from that until the next opening transaction began (the rest of the scheduler's
 * pass between batches).
 */
export interface Batches {
  count: number;
  meanSize: number;
  meanS: number;
  meanGapS: number;
}

/** Committed transactions of the bench's database so far (Postgres's statistics, flushed within a second). */
export async function commits(db: Client): Promise<number> {
  const [r] = (await db.query<{ n: string }>('SELECT xact_commit AS n FROM pg_stat_database WHERE datname = current_database()')).rows;
  return Number(r.n);
}

export async function batchesOf(db: Client, prefix: string): Promise<Batches> {
  const rows = (
    await db.query<{ n: number; open_s: number; last_s: number }>(
      `SELECT count(*)::int AS n, extract(epoch FROM c.created_at)::float8 AS open_s, extract(epoch FROM max(r.updated_at))::float8 AS last_s
       FROM rebill_cycles c JOIN rebills r ON r.id = c.rebill_id WHERE r.reference LIKE $1 || '-%' GROUP BY c.created_at ORDER BY c.created_at`,
      [prefix],
    )
  ).rows;
  const mean = (xs: number[]) => (xs.length ? xs.reduce((a, b) => a + b, 0) / xs.length : NaN);
  return {
    count: rows.length,
    meanSize: mean(rows.map((r) => r.n)),
    meanS: mean(rows.map((r) => r.last_s - r.open_s)),
    meanGapS: mean(rows.slice(1).map((r, i) => r.open_s - rows[i].last_s)),
  };
}

export interface Check {
  rebills: number;
  advanced: number;
  oneCycle: number;
  moreCycles: number;
  charges: number;
  approved: number;
  chargedOnce: number;
  chargedTwice: number;
  repeats: number;
  merchantInitiated: number;
}

/** Every seeded rebill at cycle 2 with one charge, every charge approved and authorized once at the acquirer. */
export async function checkCharges(db: Client, prefix: string, nextDue: Date): Promise<Check> {
  const [r] = (
    await db.query<Record<string, number>>(
      `WITH s AS (SELECT * FROM rebills WHERE reference LIKE $1 || '-%'),
       c AS (SELECT c.rebill_id, count(*) AS n FROM rebill_cycles c JOIN s ON s.id = c.rebill_id GROUP BY c.rebill_id),
       -- One pass over the acquirer's records (a repeat is not under the partial index by operation key).
       x AS (
         SELECT operation_key, count(*) FILTER (WHERE NOT repeat AND kind = 'authorize') AS calls, count(*) FILTER (WHERE repeat) AS repeats
         FROM sandbox_calls GROUP BY operation_key),
       k AS (
         SELECT c.transaction_id, t.status, c.merchant_initiated, coalesce(x.calls, 0) AS calls, coalesce(x.repeats, 0) AS repeats
         FROM rebill_cycles c JOIN s ON s.id = c.rebill_id JOIN transactions t ON t.id = c.transaction_id
           LEFT JOIN x ON x.operation_key = c.transaction_id || '-authorize')
       SELECT (SELECT count(*) FROM s)::int AS rebills,
         (SELECT count(*) FROM s WHERE state = 'active' AND next_cycle = 2 AND next_attempt = 0 AND open_transaction_id IS NULL AND next_due_at = $2)::int AS advanced,
         (SELECT count(*) FROM c WHERE n = 1)::int AS one_cycle,
         (SELECT count(*) FROM c WHERE n > 1)::int AS more_cycles,
         (SELECT count(*) FROM k)::int AS charges,
         (SELECT count(*) FROM k WHERE status = 8)::int AS approved,
         (SELECT count(*) FROM k WHERE calls = 1)::int AS charged_once,
         (SELECT count(*) FROM k WHERE calls > 1)::int AS charged_twice,
         (SELECT coalesce(sum(repeats), 0) FROM k)::int AS repeats,
         (SELECT count(*) FROM k WHERE merchant_initiated)::int AS merchant_initiated`,
      [prefix, nextDue],
    )
  ).rows;
  return {
    rebills: r.rebills,
    advanced: r.advanced,
    oneCycle: r.one_cycle,
    moreCycles: r.more_cycles,
    charges: r.charges,
    approved: r.approved,
    chargedOnce: r.charged_once,
    chargedTwice: r.charged_twice,
    repeats: r.repeats,
    merchantInitiated: r.merchant_initiated,
  };
}
