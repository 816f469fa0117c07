import { cpus, totalmem } from 'node:os';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { Client } from 'pg';
import { DEFAULT_DATABASE_URL, DEFAULT_REDIS_URL, maintenanceUrl } from '../scripts/lib/database';
import { repoRoot } from '../scripts/lib/processes';
import { startBaseline } from './lib/baseline';
import { measureRoundTrip } from './lib/round-trip';
import { LoadResult, LoadShape, runLoad } from './lib/load';
import { runOpenLoop } from './lib/open-loop';
import { Figure, Scenario, Target } from './lib/scenario';
import { operationScenarios } from './scenarios/operations';
import { saleScenarios } from './scenarios/sales';
import { benchSplitEngine } from './scenarios/split-engine';
import { splitSaleScenarios } from './scenarios/split-sales';
import { benchPostgres, BenchStack, benchRedis, startBenchStack, waitUntilIdle } from './lib/stack';
import { tokenScenarios } from './scenarios/tokens';
import { benchWebhooks } from './scenarios/webhooks';
import { benchLimiterCost } from './scenarios/limiter';
import { benchConsole } from './scenarios/console';
import { benchCapacity, CapacityResult, SaleKind } from './scenarios/capacity';
import { writeCapacityReport } from './capacity-doc';
import { endPauses, pausesLine, ProcessPauses, startPauses } from './lib/pauses';
import { addHistory, historyScenarios } from './scenarios/history';
import { benchRebills } from './scenarios/rebills';

/**
 * `npm run bench`: every scenario against the real stack and, in the same run, against a bare
 * Node http server answering the same body, so the ratio is comparable across machines.
 * Non-HTTP figures (the split engine in process, the webhook pipeline) have a same-run baseline
 * of their own. Figures go to stdout and to bench/results/latest.{json,md} (the README quotes the latter).
 */
const num = (name: string, fallback: number) => (process.env[name] ? Number(process.env[name]) : fallback);
const durationS = num('BENCH_DURATION_S', 10);
const warmupS = num('BENCH_WARMUP_S', 3);
const closed: LoadShape = { connections: num('BENCH_CONNECTIONS', 64), durationS };
const fixed: LoadShape = { connections: 64, durationS, rate: num('BENCH_RATE', 800) };

/** BENCH_ONLY=tokens,split: a run limited to some groups (default: all). */
const GROUPS = [
  'tokens',
  'sales',
  'operations',
  'split-sales',
  'split',
  'webhooks',
  'limiter',
  'rebills',
  'console',
  'capacity',
  'history',
] as const;
type Group = (typeof GROUPS)[number];
function selectedGroups(): Set<Group> {
  const names = (process.env.BENCH_ONLY ?? '')
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean);
  const unknown = names.filter((n) => !(GROUPS as readonly string[]).includes(n));
  if (unknown.length) throw new Error(`BENCH_ONLY: unknown group(s) ${unknown.join(', ')}; known: ${GROUPS.join(', ')}`);
  return new Set((names.length ? names : GROUPS) as Group[]);
}

interface Row {
  scenario: string;
  shape: string;
  gateway: LoadResult;
  baseline: LoadResult;
  /** Event-loop delay and GC pauses of each app and of the load generator during the gateway's run. */
  pauses?: ProcessPauses[];
}

interface Results {
  scenarios: Scenario[];
  rows: Row[];
  figures: Figure[];
  /** Lines under the HTTP table (what a scenario's afterLoad found). */
  notes: string[];
  /** Asynchronous work that never completed (payables, webhooks). */
  pipelineFailures: number;
}

async function measure(url: string, shape: LoadShape, body: () => string, between?: () => Promise<void>): Promise<LoadResult> {
  // Closed loop: autocannon. Fixed rate: our open-loop generator (autocannon's rate limiting is
  // bursty enough to give even the bare baseline a ~20 ms p99 here).
  const run = (s: LoadShape) => (s.rate ? runOpenLoop(url, s.rate, s.durationS, s.connections, body) : runLoad(url, s, body));
  // Warm-up at the same shape: JIT, pools and connections, so the figure is steady state.
  await run({ ...shape, durationS: warmupS });
  await between?.();
  return run(shape);
}

const shapeName = (s: LoadShape) => (s.rate ? `fixed ${s.rate}/s` : `closed ${s.connections} conns`);

/** As the apps read DATABASE_PREPARED_STATEMENTS (default on), and off behind the bench's PgBouncer unless set. */
function preparedStatementsOn(): boolean {
  const v = process.env.DATABASE_PREPARED_STATEMENTS;
  if (v === undefined || v === '') return benchPostgres() !== 'pgbouncer';
  return v === 'true' || v === '1';
}

type Machine = Awaited<ReturnType<typeof machine>>;

async function machine(env: NodeJS.ProcessEnv) {
  const pg = new Client({ connectionString: env.DATABASE_URL });
  await pg.connect();
  const pgVersion = (await pg.query<{ server_version: string }>('SHOW server_version')).rows[0].server_version;
  await pg.end();
  const redis = benchRedis(env);
  const redisVersion = /redis_version:(\S+)/.exec(await redis.info('server'))?.[1];
  redis.disconnect();
  return { ...machineFacts(), postgres: pgVersion, redis: redisVersion, loopbackRoundTrip: await measureRoundTrip() };
}

const machineFacts = () => ({
  cpu: cpus()[0]?.model,
  cores: cpus().length,
  memoryGiB: Math.round(totalmem() / 2 ** 30),
  node: process.version,
});

function verdict(s: Scenario, t: Target, rows: Row[]): string {
  const row = rows.find(
    (r) => r.scenario === s.name && (t.shape === 'closed' ? r.shape.startsWith('closed') : r.shape.startsWith('fixed')),
  );
  if (!row) return 'not measured';
  return t.shape === 'closed'
    ? `${row.gateway.rps.toFixed(0)} req/s vs target ≥ ${t.rps}: ${row.gateway.rps >= t.rps ? 'met' : 'MISSED'}`
    : `p99 ${row.gateway.p99} ms vs target < ${t.p99Ms} ms: ${row.gateway.p99 < t.p99Ms ? 'met' : 'MISSED'}`;
}

const figureVerdict = (f: Figure) =>
  f.ceiling !== undefined
    ? `${f.value.toFixed(1)} ${f.unit} vs target < ${f.ceiling}: ${f.value < f.ceiling ? 'met' : 'MISSED'}`
    : f.target === undefined
      ? (f.note ?? 'no target')
      : `${f.value.toFixed(0)} ${f.unit} vs target ≥ ${f.target}: ${f.value >= f.target ? 'met' : 'MISSED'}`;

function printFigure(f: Figure): void {
  process.stdout.write(
    `${f.name}: ${f.value.toFixed(0)} ${f.unit} | baseline ${f.baseline.toFixed(0)} ${f.unit}${f.detail ? ` | ${f.detail}` : ''}\n`,
  );
}

async function runScenarios(stack: BenchStack, r: Results, scenarios: Scenario[] = r.scenarios): Promise<void> {
  for (const s of scenarios) {
    await s.prepare?.(stack);
    const baseline = await startBaseline(s.baselineBody);
    try {
      for (const shape of s.shapes) {
        await waitUntilIdle(stack);
        const gateway = await measure(stack.baseUrl + s.path, shape, s.body(stack), () => startPauses(stack));
        const pauses = await endPauses(stack);
        if (s.afterLoad) {
          const after = await s.afterLoad(stack, Date.now());
          r.notes.push(after.note);
          r.pipelineFailures += after.failures;
          process.stdout.write(after.note + '\n');
        }
        const base = await measure(baseline.url + s.path, shape, s.body(stack));
        r.rows.push({ scenario: s.name, shape: shapeName(shape), gateway, baseline: base, pauses });
        const bad = gateway.non2xx + gateway.errors;
        process.stdout.write(
          `${s.name.padEnd(16)} ${shapeName(shape).padEnd(18)} ${gateway.rps.toFixed(0).padStart(6)} req/s  p50 ${String(gateway.p50).padStart(4)} ms  p99 ${String(gateway.p99).padStart(4)} ms` +
            `  | baseline ${base.rps.toFixed(0).padStart(6)} req/s p99 ${base.p99} ms${bad ? `  !! ${bad} failed requests` : ''}\n` +
            pausesLine(pauses) +
            '\n',
        );
      }
    } finally {
      await baseline.stop();
    }
  }
}

async function main(): Promise<void> {
  const only = selectedGroups();
  const r: Results = {
    scenarios: [
      ...(only.has('tokens') ? tokenScenarios(closed, fixed) : []),
      ...(only.has('sales') ? saleScenarios(closed, { ...fixed, rate: num('BENCH_SALE_RATE', 300) }) : []),
      ...(only.has('operations') ? operationScenarios(closed) : []),
      ...(only.has('split-sales') ? splitSaleScenarios(closed) : []),
    ],
    rows: [],
    figures: [],
    notes: [],
    pipelineFailures: 0,
  };
  // In process and CPU-bound: before the stack starts, so its idle apps take nothing from it.
  if (only.has('split')) {
    r.figures.push(benchSplitEngine(durationS, warmupS));
    printFigure(r.figures[r.figures.length - 1]);
  }
  // On servers of its own (a private Redis and Postgres), before the shared stack starts.
  if (only.has('capacity')) r.pipelineFailures += await capacity();
  let env: NodeJS.ProcessEnv = {
    DATABASE_URL: maintenanceUrl(process.env.DATABASE_URL ?? DEFAULT_DATABASE_URL),
    REDIS_URL: process.env.REDIS_URL ?? DEFAULT_REDIS_URL,
  };
  const stack =
    r.scenarios.length || only.has('webhooks') || only.has('limiter') || only.has('rebills') || only.has('console') || only.has('history')
      ? await startBenchStack()
      : undefined;
  try {
    if (stack) {
      env = stack.env;
      await runScenarios(stack, r);
      if (only.has('webhooks')) {
        const events = num('BENCH_WEBHOOK_EVENTS', 0);
        for (const f of await benchWebhooks(
          stack,
          events || 5000,
          events || 1000,
          num('BENCH_WEBHOOK_WARMUP_EVENTS', warmupS > 0 ? 500 : 0),
        )) {
          r.figures.push(f);
          r.pipelineFailures += f.failures ?? 0;
          printFigure(f);
        }
      }
      if (only.has('limiter')) {
        const f = await benchLimiterCost(stack, closed, warmupS, num('BENCH_LIMITER_ROUNDS', 3));
        r.figures.push(f);
        r.pipelineFailures += f.failures ?? 0;
        printFigure(f);
      }
      // After the HTTP groups: its charges (a hundred thousand sales) would weigh on every group after it.
      if (only.has('rebills')) await rebills(stack, r);
      // Last but the console: its ten million sales would weigh on every group after it.
      if (only.has('history')) await benchHistory(stack, r);
      // Last: its million deliveries would weigh on every group after it.
      if (only.has('console')) {
        const c = await benchConsole(
          stack,
          num('BENCH_CONSOLE_DELIVERIES', 1_000_000),
          num('BENCH_CONSOLE_REQUESTS', 300),
          num('BENCH_CONSOLE_WARMUP', warmupS > 0 ? 30 : 0),
        );
        r.notes.push(c.note);
        for (const f of c.figures) {
          r.figures.push(f);
          r.pipelineFailures += f.failures ?? 0;
          printFigure(f);
        }
      }
    }
  } finally {
    const m = await machine(env).catch(() => undefined);
    await stack?.teardown();
    report(r, only, m);
  }
}

/** BENCH_CAPACITY_MIX=card=3,token=1,split=1: the relative weights of each kind of sale. */
function capacityMix(): Record<SaleKind, number> {
  const mix: Record<SaleKind, number> = { card: 0, token: 0, split: 0 };
  for (const part of (process.env.BENCH_CAPACITY_MIX ?? 'card=3,token=1,split=1').split(',')) {
    const [kind, weight] = part.split('=').map((x) => x.trim());
    if (!(kind in mix) || !/^\d+$/.test(weight ?? '')) throw new Error(`BENCH_CAPACITY_MIX: "${part}" is not card|token|split=<integer>`);
    mix[kind as SaleKind] = Number(weight);
  }
  return mix;
}

/**
 * The capacity group: measures, writes bench/results/capacity.{json,md}, and rewrites the
 * generated part of docs/capacity.md from it. Returns the failed sales.
 */
async function capacity(): Promise<number> {
  // 100 sales/s keep about one core busy (docs/capacity.md): steady on a 2-core machine.
  const rate = num('BENCH_CAPACITY_RATE', 100);
  const result: CapacityResult = await benchCapacity({
    rounds: num('BENCH_CAPACITY_ROUNDS', 2),
    sales: num('BENCH_CAPACITY_SALES', 6000),
    rate,
    mix: capacityMix(),
    idleS: num('BENCH_CAPACITY_IDLE_S', 10),
    warmupSales: Math.round(rate * Math.max(warmupS, 1)),
    queuedSales: num('BENCH_CAPACITY_QUEUED_SALES', 2000),
  });
  const markdown = writeCapacityReport([{ ...result, machine: machineFacts() }]);
  process.stdout.write(`\n${markdown}\n\n(bench/results/capacity.{json,md} and docs/capacity.md written)\n`);
  return result.failures;
}

/**
 * Issue 18: BENCH_REBILLS active rebills (default 100 000) due in the same minute, charged by the
 * stack's tokenizer (≥ 500 cycles/s, none twice); beside the same run's closed-loop sales, when
 * the sales group ran too.
 */
async function rebills(stack: BenchStack, r: Results): Promise<void> {
  const n = num('BENCH_REBILLS', 100_000);
  const { figure, notes } = await benchRebills(stack, {
    rebills: n,
    tokens: num('BENCH_REBILL_TOKENS', 200),
    merchants: num('BENCH_REBILL_MERCHANTS', 4),
    warmup: num('BENCH_REBILL_WARMUP', warmupS > 0 ? 2_000 : 0),
    baseline: num('BENCH_REBILL_BASELINE', n),
  });
  const sale = r.rows.find((row) => row.scenario === 'sale (approved)' && row.shape.startsWith('closed'));
  if (sale)
    notes.push(
      `rebills beside sales: ${figure.value.toFixed(0)} cycles/s = ${(figure.value / sale.gateway.rps).toFixed(2)} × the same run's closed-loop sales ` +
        `(${sale.gateway.rps.toFixed(0)} req/s, ${(sale.gateway.rps / sale.baseline.rps).toFixed(3)} of its bare baseline); ` +
        `rebill cycles/s over their own bare pipeline: ${(figure.value / figure.baseline).toFixed(3)}`,
    );
  r.figures.push(figure);
  r.notes.push(...notes);
  r.pipelineFailures += figure.failures ?? 0;
  printFigure(figure);
  if (sale) process.stdout.write(notes[notes.length - 1] + '\n');
}

/**
 * Bounded data growth (docs/performance.md "Sales on a long history"): the sale scenarios on the
 * bench's small history, then again once BENCH_HISTORY_SALES (10 million) settled sales of history
 * are added; the ratio of each figure, long over small.
 */
async function benchHistory(stack: BenchStack, r: Results): Promise<void> {
  const sales = num('BENCH_HISTORY_SALES', 10_000_000);
  const saleFixed = { ...fixed, rate: num('BENCH_SALE_RATE', 300) };
  const rounds: Row[][] = [];
  for (const label of ['small history', `${(sales / 1e6).toLocaleString('en-US')}M sales of history`]) {
    if (rounds.length) {
      const added = await addHistory(stack, sales);
      const note = `history: ${sales.toLocaleString('en-US')} settled sales added in ${added.seconds.toFixed(0)} s (VACUUM ANALYZE included); database ${added.databaseSize}`;
      r.notes.push(note, ...added.plans.map((p) => `- plan on the long history, ${p}`));
      process.stdout.write([note, ...added.plans].join('\n') + '\n');
    }
    const scenarios = historyScenarios(closed, saleFixed, label);
    const before = r.rows.length;
    await runScenarios(stack, r, scenarios);
    r.scenarios.push(...scenarios);
    rounds.push(r.rows.slice(before));
  }
  const [small, long] = rounds;
  small.forEach((a, i) => {
    const b = long[i];
    const note =
      `history ratio, ${a.scenario.replace(/ @ .*/, '')} (${a.shape}): req/s ${b.gateway.rps.toFixed(0)} / ${a.gateway.rps.toFixed(0)} = ${(b.gateway.rps / a.gateway.rps).toFixed(3)}, ` +
      `p99 ${b.gateway.p99} / ${a.gateway.p99} ms = ${(b.gateway.p99 / a.gateway.p99).toFixed(2)}; baseline req/s ${b.baseline.rps.toFixed(0)} / ${a.baseline.rps.toFixed(0)} = ${(b.baseline.rps / a.baseline.rps).toFixed(3)}`;
    r.notes.push(note);
    process.stdout.write(note + '\n');
  });
}

const fmt = (n: number) => n.toLocaleString('en-US', { maximumFractionDigits: 0 });

function report({ scenarios, rows, figures, notes, pipelineFailures }: Results, only: Set<Group>, m: Machine | undefined): void {
  const dir = join(repoRoot(), 'bench', 'results');
  mkdirSync(dir, { recursive: true });
  const failures = rows.reduce((n, r) => n + r.gateway.non2xx + r.gateway.errors, 0) + pipelineFailures;
  writeFileSync(
    join(dir, 'latest.json'),
    JSON.stringify(
      {
        at: new Date().toISOString(),
        machine: m,
        groups: [...only],
        rateLimiter: process.env.RATE_LIMIT_ENABLED === 'false' ? 'off' : 'on',
        postgres: benchPostgres(),
        preparedStatements: preparedStatementsOn() ? 'on' : 'off',
        rows,
        notes,
        figures,
        failures,
      },
      null,
      2,
    ) + '\n',
  );
  const partial = only.size < GROUPS.length ? ` Groups run: ${[...only].join(', ')} (BENCH_ONLY).` : '';
  const limiter = process.env.RATE_LIMIT_ENABLED === 'false' ? ' Rate limiter off (RATE_LIMIT_ENABLED=false).' : '';
  const database =
    (benchPostgres() === 'pgbouncer' ? ' Apps through PgBouncer in transaction mode (BENCH_POSTGRES=pgbouncer).' : '') +
    (preparedStatementsOn() ? '' : ' Named statements off (DATABASE_PREPARED_STATEMENTS=false).');
  const lines = [
    `Measured ${new Date().toISOString().slice(0, 10)} on ${m?.cores} cores (${m?.cpu}), ${m?.memoryGiB} GiB, Node ${m?.node}, Postgres ${m?.postgres}, Redis ${m?.redis}; ` +
      `everything co-located (load generator, four apps, Postgres, Redis). ${durationS} s per run after a ${warmupS} s warm-up.${partial}${limiter}${database}` +
      (m?.loopbackRoundTrip
        ? ` One message between two processes on this host (loopback TCP, one byte there and back, one at a time): ` +
          `${fmt(m.loopbackRoundTrip.perSecond)} round trips/s, ${m.loopbackRoundTrip.callerCpuUs.toFixed(0)} µs of the caller's CPU each.`
        : ''),
    ...(rows.length
      ? [
          '',
          '| scenario | load | gateway req/s | p50 ms | p99 ms | baseline req/s | baseline p99 ms | gateway / baseline req/s |',
          '|---|---|---|---|---|---|---|---|',
          ...rows.map(
            (r) =>
              `| ${r.scenario} | ${r.shape} | ${r.gateway.rps.toFixed(0)} | ${r.gateway.p50} | ${r.gateway.p99} | ${r.baseline.rps.toFixed(0)} | ${r.baseline.p99} | ${(r.gateway.rps / r.baseline.rps).toFixed(3)} |`,
          ),
        ]
      : []),
    ...(notes.length ? ['', ...notes] : []),
    ...(figures.length
      ? [
          '',
          'In-process and pipeline figures (baseline: the same work stripped bare, in the same run):',
          '',
          '| figure | measured | baseline | measured / baseline | verdict |',
          '|---|---|---|---|---|',
          ...figures.map(
            (f) =>
              `| ${f.name} | ${fmt(f.value)} ${f.unit} | ${fmt(f.baseline)} ${f.unit} | ${(f.value / f.baseline).toFixed(3)} | ${figureVerdict(f)} |`,
          ),
          ...figures.filter((f) => f.detail).flatMap((f, i) => [...(i ? [] : ['']), `- ${f.name}: ${f.detail}`]),
        ]
      : []),
    '',
    ...scenarios.flatMap((s) =>
      [s.target, s.extraTarget].filter((t): t is Target => !!t).map((t) => `- ${s.name}: ${verdict(s, t, rows)}`),
    ),
    ...figures.filter((f) => f.target !== undefined || f.ceiling !== undefined).map((f) => `- ${f.name}: ${figureVerdict(f)}`),
    failures ? `\n**${failures} requests or pipeline items failed during the run.**` : '',
  ];
  writeFileSync(join(dir, 'latest.md'), lines.join('\n') + '\n');
  process.stdout.write('\n' + lines.join('\n') + '\n');
  if (failures) process.exitCode = 1;
}

main().catch((e) => {
  process.stderr.write(`bench failed: ${(e as Error).stack ?? e}\n`);
  process.exit(1);
});
