import { Client } from 'pg';
import { dateOfDay, dayNumber, RebillPeriod } from '@app/contracts';
import { cycleDate, dueAt } from '@app/rebills/schedule';
import { sleep } from '../../scripts/lib/processes';
import { Figure } from '../lib/scenario';
import { cpuSecondsBetween, cpuSnapshot } from '../lib/cpu';
import { BenchStack, waitUntilIdle } from '../lib/stack';
import { bareCycles } from './rebill-bare';
import { Batches, batchesOf, Check, checkCharges, commits } from './rebill-checks';
import { prepareTemplates, Template } from './rebill-templates';

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
    const detail = drainDetail(d, o, templates.length, stack.env.REBILL_POLL_MS, drain);
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

/**
 * Inserts `n` active rebills copying the templates in turn, all due at one instant a few seconds ahead; `slack` is
 * how long until then once the seed is done, `nextDue` when their second cycle falls due.
 */
async function seedRebills(
  db: Client,
  templates: Template[],
  n: number,
  prefix: string,
): Promise<{ due: Date; seedS: number; slack: number; nextDue: Date }> {
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
  return { due, seedS, slack, nextDue };
}

/** Waits (at most the bench's timeout for `n`) until no rebill is due or open; returns how many still are. */
async function waitUntilCharged(db: Client, due: Date, n: number): Promise<number> {
  // Still due (nothing open) or open: both counts read partial indexes only.
  const remaining = async () =>
    (
      await db.query<{ n: number }>(
        `SELECT ((SELECT count(*) FROM rebills WHERE state = 'active' AND open_transaction_id IS NULL AND next_due_at <= $1)
               + (SELECT count(*) FROM rebills WHERE open_transaction_id IS NOT NULL))::int AS n`,
        [due],
      )
    ).rows[0].n;
  const deadline = Date.now() + Math.max(TIMEOUT_FLOOR_S, n / 25) * 1000;
  let unfinished = await remaining();
  while (unfinished > 0 && Date.now() < deadline) {
    await sleep(500);
    unfinished = await remaining();
  }
  return unfinished;
}

/** From the due moment: when the first charge was opened and the last rebill moved on (s). */
async function drainTimes(db: Client, prefix: string, due: Date): Promise<{ first_open: number | null; last_advance: number | null }> {
  const [times] = (
    await db.query<{ first_open: number | null; last_advance: number | null }>(
      `SELECT (SELECT extract(epoch FROM min(c.created_at) - $2::timestamptz) FROM rebill_cycles c JOIN rebills r ON r.id = c.rebill_id
                 WHERE r.reference LIKE $1 || '-%')::float8 AS first_open,
              (SELECT extract(epoch FROM max(updated_at) - $2::timestamptz) FROM rebills WHERE reference LIKE $1 || '-%' AND next_cycle > 1)::float8 AS last_advance`,
      [prefix, due],
    )
  ).rows;
  return times;
}

/** The figure's detail: how the drain went, batch by batch, and what it cost. */
function drainDetail(d: Drain, o: RebillBenchOptions, cards: number, pollMs: string | undefined, drain: number): string {
  const c = d.check;
  const duplicates = c.moreCycles + c.chargedTwice;
  return (
    `${d.seeded.toLocaleString('en-US')} rebills of ${o.merchants} merchants on ${cards} vaulted cards, all due at one instant; ` +
    `first charge opened ${d.firstOpenS.toFixed(1)} s after (REBILL_POLL_MS ${pollMs ?? 'default 5000'}), ` +
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
    `baseline: ${o.baseline.toLocaleString('en-US')} rows claimed, sent and moved on by the same batches and transport to a worker answering at once`
  );
}

/** Anything short of every rebill charged once and moved on once. */
function failuresOf(n: number, d: Drain): number {
  const c = d.check;
  return Math.max(0, n - Math.min(c.rebills, c.advanced, c.oneCycle, c.charges, c.chargedOnce, c.approved)) + c.moreCycles + c.chargedTwice;
}

/**
 * Seeds `n` active rebills on the templates' cards, all due at one instant, and waits until the
 * tokenizer's scheduler has charged them all and moved each on; then checks what was charged.
 */
async function seedAndDrain(stack: BenchStack, db: Client, templates: Template[], n: number, prefix: string): Promise<Drain> {
  const { due, seedS, slack, nextDue } = await seedRebills(db, templates, n, prefix);
  if (slack > 0) await sleep(slack * 1000);
  const commitsBefore = await commits(db);
  const cpuBefore = cpuSnapshot(stack.apps.map((a) => ({ label: a.name, pid: a.proc.pid! })));
  const unfinished = await waitUntilCharged(db, due, n);
  const times = await drainTimes(db, prefix, due);
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
