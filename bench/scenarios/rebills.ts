import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { join } from 'node:path';
import { Client } from 'pg';
import { lastValueFrom } from 'rxjs';
import { cycleDate, dateOfDay, dayNumber, dueAt, RebillPeriod } from '@app/contracts';
import { BullMqClient, withJobId } from '@app/messaging';
import { EnvReader, readRedisTarget } from '@app/platform';
import { sleep } from '../../scripts/lib/processes';
import { approvedCardSequence } from '../lib/cards';
import { Figure } from '../lib/scenario';
import { cpuSecondsBetween, cpuSnapshot } from '../lib/cpu';
import { BenchStack, internalIdOf, runCli, waitUntilIdle } from '../lib/stack';

/**
 * Issue 18's requirement: rebills falling due in the same minute are charged at ≥ 500 cycles/s,
 * none twice. The stack's tokenizer charges them itself (its scheduler polls every REBILL_POLL_MS,
 * opens REBILL_BATCH charges per statement and sends each as a card.authorize job, decided as a
 * token sale); the bench only seeds the rebills and watches Postgres.
 *
 * Seeding, fast and honest:
 * - a pool of real vaulted cards (token/add over HTTP, numbers the sandbox approves at once) of a
 *   few merchants: the tokenizer loads and decrypts each charge's card from the vault;
 * - one rebill per token created over HTTP (dateStart in the future) and cancelled at once: the
 *   template whose columns (settlement terms, method, retry days, masked card, card expiry, as
 *   the api writes them) the bulk rows copy;
 * - `rebills` rows set-based in one statement, the pool's tokens taken in turn (each token serves
 *   rebills / tokens of them), next cycle 1, all due at one instant a few seconds ahead (instead
 *   of the 00:00 UTC a cycle's date gives, so the bench knows when they fell due), then ANALYZE.
 */
export interface RebillBenchOptions {
  rebills: number;
  /** Vaulted cards the rebills share. */
  tokens: number;
  merchants: number;
  /** Rebills charged first, uncounted (JIT, pools), the same way. */
  warmup: number;
  /** Rebills of the bare baseline. */
  baseline: number;
}

interface Template {
  id: string;
  merchantId: string;
}

interface Drain {
  seeded: number;
  seedS: number;
  /** Seconds between the end of the seeding (ANALYZE included) and the due moment (negative: it overran). */
  slackS: number;
  /** From the due moment: the first charge opened, the last rebill moved on (s). */
  firstOpenS: number;
  lastAdvanceS: number;
  /** Rebills still due or open when the bench stopped waiting. */
  unfinished: number;
  check: Check;
  /** From the bench seeing the last rebill moved on until the gateway was idle (settlement, events), s. */
  settledAfterS: number;
  settled: number;
  /**
   * CPU ms per rebill of each app, and of every Postgres and Redis process on the host ('servers':
   * shared with whatever else runs there), from the due moment until the bench saw the last moved on.
   */
  cpuMsPerCycle: Record<string, number>;
  /** Postgres transactions committed in the bench's database per rebill, from the due moment until the last moved on. */
  commitsPerCycle: number;
  batches: Batches;
}

/**
 * The charges as the scheduler opened them (one opening transaction each, told apart by its
 * timestamp, which is when that transaction began: its own statements count in the batch's time):
 * how many, how long from a batch's opening transaction's start until its last rebill moved on,
 * and how long from that until the next opening transaction began (the rest of the scheduler's
 * pass between batches).
 */
interface Batches {
  count: number;
  meanSize: number;
  meanS: number;
  meanGapS: number;
}

/** Committed transactions of the bench's database so far (Postgres's statistics, flushed within a second). */
async function commits(db: Client): Promise<number> {
  const [r] = (await db.query<{ n: string }>('SELECT xact_commit AS n FROM pg_stat_database WHERE datname = current_database()')).rows;
  return Number(r.n);
}

async function batchesOf(db: Client, prefix: string): Promise<Batches> {
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

interface Check {
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

const TIMEOUT_FLOOR_S = 180;

export async function benchRebills(stack: BenchStack, o: RebillBenchOptions): Promise<{ figure: Figure; notes: string[] }> {
  const db = new Client({ connectionString: stack.env.DATABASE_URL });
  await db.connect();
  try {
    const setupStarted = Date.now();
    const templates = await prepareTemplates(stack, o.merchants, o.tokens);
    const setupS = (Date.now() - setupStarted) / 1000;
    process.stdout.write(
      `rebills: ${templates.length} vaulted cards and template rebills of ${o.merchants} merchants in ${setupS.toFixed(1)} s\n`,
    );
    const runTag = Date.now().toString(36);
    let failures = 0;
    if (o.warmup > 0) {
      await waitUntilIdle(stack);
      const w = await seedAndDrain(stack, db, templates, o.warmup, `RBW-${runTag}`);
      failures += failuresOf(o.warmup, w);
      process.stdout.write(`rebills warm-up: ${o.warmup} charged in ${w.lastAdvanceS.toFixed(1)} s from due\n`);
    }
    await waitUntilIdle(stack);
    const d = await seedAndDrain(stack, db, templates, o.rebills, `RB-${runTag}`);
    failures += failuresOf(o.rebills, d);
    await waitUntilIdle(stack);
    const bare = await bareCycles(stack, db, o.baseline);
    const value = d.unfinished ? NaN : d.seeded / d.lastAdvanceS;
    const drain = d.seeded / (d.lastAdvanceS - d.firstOpenS);
    const c = d.check;
    const duplicates = c.moreCycles + c.chargedTwice;
    const detail =
      `${d.seeded.toLocaleString('en-US')} rebills of ${o.merchants} merchants on ${templates.length} vaulted cards, all due at one instant; ` +
      `first charge opened ${d.firstOpenS.toFixed(1)} s after (REBILL_POLL_MS ${stack.env.REBILL_POLL_MS ?? 'default 5000'}), ` +
      `last rebill moved on ${d.lastAdvanceS.toFixed(1)} s after (${drain.toFixed(0)} cycles/s from the first opened)` +
      (d.unfinished ? `, **${d.unfinished} not charged within the wait**` : '') +
      `; ${c.advanced}/${c.rebills} at cycle 2, ${c.oneCycle} with one charge, ${c.chargedOnce}/${c.charges} charges with one acquirer authorization ` +
      `(${c.repeats} repeats answered from the record, ${c.merchantInitiated} merchant-initiated), ${c.approved} approved, ` +
      `${duplicates ? `**${duplicates} charged twice**` : 'none charged twice'}; ` +
      `${d.batches.count} batches of ${d.batches.meanSize.toFixed(0)} on average, each ${d.batches.meanS.toFixed(2)} s from its opening transaction's start to its last moved on, ` +
      `${d.batches.meanGapS.toFixed(2)} s from that to the next opening's start; ${d.commitsPerCycle.toFixed(1)} Postgres commits per cycle; ` +
      `CPU ms per cycle until the last moved on: ${Object.entries(d.cpuMsPerCycle)
        .map(([label, ms]) => `${label} ${ms.toFixed(2)}`)
        .join(', ')} (servers: every Postgres and Redis process on the host); ` +
      `settled ${d.settled}/${c.charges}, the gateway idle ${d.settledAfterS.toFixed(1)} s after the bench saw the last moved on; ` +
      `seeded in ${d.seedS.toFixed(1)} s (due ${d.slackS >= 0 ? `${d.slackS.toFixed(1)} s after the seed` : `**${(-d.slackS).toFixed(1)} s before the seed ended**`}); ` +
      `baseline: ${o.baseline.toLocaleString('en-US')} rows claimed, sent and moved on by the same batches and transport to a worker answering at once`;
    const note =
      `rebills: ${d.seeded.toLocaleString('en-US')} due in the same minute, charged at ${value.toFixed(0)} cycles/s from the due moment ` +
      `(${drain.toFixed(0)}/s from the first opened); bare pipeline ${bare.toFixed(0)}/s; ${duplicates} charged twice`;
    process.stdout.write(note + '\n');
    return {
      figure: {
        name: 'rebill cycles due in the same minute, charged',
        unit: 'cycles/s',
        value,
        baseline: bare,
        target: 500,
        detail,
        failures,
      },
      notes: [note],
    };
  } finally {
    await db.end();
  }
}

/** Anything short of every rebill charged once and moved on once. */
function failuresOf(n: number, d: Drain): number {
  const c = d.check;
  return Math.max(0, n - Math.min(c.rebills, c.advanced, c.oneCycle, c.charges, c.chargedOnce, c.approved)) + c.moreCycles + c.chargedTwice;
}

const envelope = (merchant: { merchantId: string; merchantKey: string }, op: Record<string, unknown>) =>
  JSON.stringify({ 'transaction-request': { version: '1.0.0', verification: merchant, ...op } });

async function post<T>(stack: BenchStack, path: string, body: string): Promise<T> {
  const res = await fetch(stack.baseUrl + path, { method: 'POST', headers: { 'content-type': 'application/json' }, body });
  const text = await res.text();
  if (res.status !== 200) throw new Error(`${path}: ${res.status} ${text.slice(0, 300)}`);
  return JSON.parse(text) as T;
}

/**
 * The merchants (the stack's and more), a pool of vaulted cards spread over them, and one rebill
 * per card created over HTTP and cancelled: the rows the seeding copies.
 */
async function prepareTemplates(stack: BenchStack, merchants: number, tokens: number): Promise<Template[]> {
  const shops = [{ ...stack.merchant, internalId: stack.merchantInternalId }];
  for (let i = 1; i < merchants; i++) {
    const m = await runCli<{ merchantId: string; merchantKey: string }>(stack.env, ['merchant:create', '--name', `bench rebills ${i}`]);
    shops.push({ merchantId: m.merchantId, merchantKey: m.merchantKey, internalId: await internalIdOf(stack.env, m.merchantId) });
  }
  const nextCard = approvedCardSequence(700_000_000 + (Date.now() % 1_000) * 100_000);
  const year = new Date().getUTCFullYear();
  const out: Template[] = [];
  for (let i = 0; i < tokens; i += 25) {
    const batch = Array.from({ length: Math.min(25, tokens - i) }, async (_, k) => {
      const shop = shops[(i + k) % shops.length];
      const verification = { merchantId: shop.merchantId, merchantKey: shop.merchantKey };
      const { TokenCard } = await post<{ TokenCard: string }>(
        stack,
        '/v1/token/add',
        envelope(verification, { tokencard: { cardNumber: nextCard(), cardHolder: 'BENCH REBILL', cardExpirationDate: '203512' } }),
      );
      const rebill = await post<{ transactionId: string }>(
        stack,
        '/v1/receiver',
        envelope(verification, {
          rebill: {
            order: {
              reference: `RBT-${i + k}`,
              totalAmount: 1990,
              period: 3,
              frequency: 1,
              dateStart: `${year + 1}-01-15`,
              dateEnd: `${year + 2}-01-14`,
            },
            paymentCreditCard: { acquirer: 26, amount: 1990, currency: '986', country: 'BRA', numberOfPayments: 1, tokenCard: TokenCard },
          },
        }),
      );
      await post(stack, '/v1/receiver', envelope(verification, { cancel: { transactionId: rebill.transactionId } }));
      return { id: rebill.transactionId.toLowerCase(), merchantId: shop.internalId };
    });
    out.push(...(await Promise.all(batch)));
  }
  return out;
}

/**
 * Seeds `n` active rebills on the templates' cards, all due at one instant, and waits until the
 * tokenizer's scheduler has charged them all and moved each on; then checks what was charged.
 */
async function seedAndDrain(stack: BenchStack, db: Client, templates: Template[], n: number, prefix: string): Promise<Drain> {
  const today = dateOfDay(Math.floor(Date.now() / 86_400_000));
  const dateEnd = dateOfDay(dayNumber(today) + 365);
  // Ahead of the seed's end (about 25 000 rows/s here), so every row is in place when they fall due.
  const leadS = 5 + n / 10_000;
  const seedStarted = Date.now();
  // The instant in whole seconds: a JS Date (the bench's copy of it) holds milliseconds, Postgres microseconds.
  const [{ due, seeded }] = (
    await db.query<{ due: Date; seeded: number }>(
      `WITH t AS (SELECT row_number() OVER (ORDER BY id) - 1 AS k, * FROM rebills WHERE id = ANY($1::uuid[])),
       d AS (SELECT date_trunc('second', now() + make_interval(secs => $6)) AS due),
       i AS (
         INSERT INTO rebills (id, merchant_id, reference, state, period, frequency, date_start, date_end, retry_days, acquirer, instalments,
           currency, amount, token_card, masked_card, brand, card_expires, details, url_return, next_cycle, next_attempt, next_due_at)
         SELECT gen_random_uuid(), t.merchant_id, $2 || '-' || g, 'active', t.period, t.frequency, $3::date, $4::date, t.retry_days, t.acquirer,
           t.instalments, t.currency, t.amount, t.token_card, t.masked_card, t.brand, t.card_expires, t.details, t.url_return, 1, 0, d.due
         FROM generate_series(0, $5::int - 1) AS g JOIN t ON t.k = g % $7::int CROSS JOIN d
         RETURNING 1)
       SELECT (SELECT due FROM d), (SELECT count(*)::int FROM i) AS seeded`,
      [templates.map((t) => t.id), prefix, today, dateEnd, n, leadS, templates.length],
    )
  ).rows;
  if (seeded !== n) throw new Error(`rebills: ${seeded} of ${n} seeded (templates: ${templates.length})`);
  await db.query('ANALYZE rebills');
  const seedS = (Date.now() - seedStarted) / 1000;
  const [{ slack }] = (
    await db.query<{ slack: number }>('SELECT extract(epoch FROM $1::timestamptz - clock_timestamp())::float8 AS slack', [due])
  ).rows;
  const [tpl] = (
    await db.query<{ period: RebillPeriod; frequency: number }>('SELECT period, frequency FROM rebills WHERE id = $1', [templates[0].id])
  ).rows;
  const nextDue = dueAt(cycleDate(today, tpl.period, tpl.frequency, 2));

  // Still due (nothing open) or open: both counts read partial indexes only.
  const remaining = async () =>
    (
      await db.query<{ n: number }>(
        `SELECT ((SELECT count(*) FROM rebills WHERE state = 'active' AND open_transaction_id IS NULL AND next_due_at <= $1)
               + (SELECT count(*) FROM rebills WHERE open_transaction_id IS NOT NULL))::int AS n`,
        [due],
      )
    ).rows[0].n;
  if (slack > 0) await sleep(slack * 1000);
  const commitsBefore = await commits(db);
  const cpuBefore = cpuSnapshot(stack.apps.map((a) => ({ label: a.name, pid: a.proc.pid! })));
  const deadline = Date.now() + Math.max(TIMEOUT_FLOOR_S, n / 25) * 1000;
  let unfinished = await remaining();
  while (unfinished > 0 && Date.now() < deadline) {
    await sleep(500);
    unfinished = await remaining();
  }
  const [times] = (
    await db.query<{ first_open: number | null; last_advance: number | null }>(
      `SELECT (SELECT extract(epoch FROM min(c.created_at) - $2::timestamptz) FROM rebill_cycles c JOIN rebills r ON r.id = c.rebill_id
                 WHERE r.reference LIKE $1 || '-%')::float8 AS first_open,
              (SELECT extract(epoch FROM max(updated_at) - $2::timestamptz) FROM rebills WHERE reference LIKE $1 || '-%' AND next_cycle > 1)::float8 AS last_advance`,
      [prefix, due],
    )
  ).rows;
  const commitsDuring = (await commits(db)) - commitsBefore;
  const spent = cpuSecondsBetween(cpuBefore, cpuSnapshot(stack.apps.map((a) => ({ label: a.name, pid: a.proc.pid! }))));
  // The settlement of the charges and their events, after the last rebill moved on (not in the figure).
  const drainedAt = Date.now();
  await waitUntilIdle(stack, Math.max(TIMEOUT_FLOOR_S, n / 25) * 1000).catch(() => undefined);
  const settledAfterS = (Date.now() - drainedAt) / 1000;
  const check = await checkCharges(db, prefix, nextDue);
  const [{ settled }] = (
    await db.query<{ settled: number }>(
      `SELECT count(*)::int AS settled FROM settlements s JOIN rebill_cycles c ON c.transaction_id = s.transaction_id
         JOIN rebills r ON r.id = c.rebill_id WHERE r.reference LIKE $1 || '-%'`,
      [prefix],
    )
  ).rows;
  return {
    seeded: n,
    seedS,
    slackS: slack,
    firstOpenS: times.first_open ?? NaN,
    lastAdvanceS: times.last_advance ?? NaN,
    unfinished,
    check,
    settledAfterS,
    settled,
    commitsPerCycle: commitsDuring / n,
    batches: await batchesOf(db, prefix),
    cpuMsPerCycle: Object.fromEntries(Object.entries(spent.byLabel).map(([label, cpuS]) => [label, (cpuS * 1000) / n])),
  };
}

/** Every seeded rebill at cycle 2 with one charge, every charge approved and authorized once at the acquirer. */
async function checkCharges(db: Client, prefix: string, nextDue: Date): Promise<Check> {
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

const BARE_PATTERN = 'bench.rebill-bare';

/**
 * The same work stripped bare: `n` rows of a table of their own, due at once, claimed
 * REBILL_BATCH at a time as the scheduler opens charges (one transaction: SELECT … FOR UPDATE SKIP
 * LOCKED in due order, read off the index, UPDATE), each sent through the gateway's own queue transport to a worker in another
 * process (TOKENIZER_CONCURRENCY at once) that answers at once, and moved on in one UPDATE per
 * batch. No transaction, vault, acquirer, outbox or settlement. Returns rows/s.
 */
async function bareCycles(stack: BenchStack, db: Client, n: number): Promise<number> {
  const batch = Number(stack.env.REBILL_BATCH ?? 500);
  const concurrency = Number(stack.env.TOKENIZER_CONCURRENCY ?? 32);
  await db.query(`CREATE TABLE bench_bare_rebills (id uuid PRIMARY KEY, next_cycle int NOT NULL, next_due_at timestamptz, open_id uuid)`);
  await db.query(`CREATE INDEX bench_bare_rebills_due ON bench_bare_rebills (next_due_at) WHERE open_id IS NULL`);
  const worker = spawn(process.execPath, [join(__dirname, '..', 'rebill-bare-worker.js'), BARE_PATTERN, String(concurrency)], {
    env: stack.env,
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  const env = new EnvReader(stack.env);
  const client = new BullMqClient({ connection: readRedisTarget(env), prefix: stack.env.QUEUE_PREFIX, replyTimeoutMs: 60_000 });
  env.done('bench');
  try {
    await once(worker.stdout, 'data');
    await db.query(
      `INSERT INTO bench_bare_rebills SELECT gen_random_uuid(), 1, now() - interval '1 second', NULL FROM generate_series(1, $1::int)`,
      [n],
    );
    await db.query('ANALYZE bench_bare_rebills');
    const started = process.hrtime.bigint();
    for (;;) {
      await db.query('BEGIN');
      const ids = (
        await db.query<{ id: string }>(
          `SELECT id FROM bench_bare_rebills WHERE open_id IS NULL AND next_due_at <= now() ORDER BY next_due_at LIMIT $1 FOR UPDATE SKIP LOCKED`,
          [batch],
        )
      ).rows.map((r) => r.id);
      await db.query(`UPDATE bench_bare_rebills SET open_id = gen_random_uuid() WHERE id = ANY($1::uuid[])`, [ids]);
      await db.query('COMMIT');
      if (!ids.length) break;
      await Promise.all(ids.map((id) => lastValueFrom(client.send(BARE_PATTERN, withJobId({ id }, `bare-${id}`)))));
      await db.query(
        `UPDATE bench_bare_rebills SET next_cycle = 2, next_due_at = next_due_at + interval '1 month', open_id = NULL WHERE id = ANY($1::uuid[])`,
        [ids],
      );
    }
    const seconds = Number(process.hrtime.bigint() - started) / 1e9;
    const [{ done }] = (await db.query<{ done: number }>('SELECT count(*)::int AS done FROM bench_bare_rebills WHERE next_cycle = 2')).rows;
    if (done !== n) throw new Error(`bare rebills: ${done} of ${n} moved on`);
    return n / seconds;
  } finally {
    await client.close();
    if (worker.exitCode === null) {
      worker.kill('SIGTERM');
      await once(worker, 'exit');
    }
    await db.query('DROP TABLE IF EXISTS bench_bare_rebills');
  }
}
