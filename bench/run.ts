import { DEFAULT_DATABASE_URL, DEFAULT_REDIS_URL, maintenanceUrl } from '../scripts/lib/database';
import { repoRoot } from '../scripts/lib/processes';
import { startBarePipeline, startBaseline } from './lib/baseline';
import { LoadResult, LoadShape, runLoad } from './lib/load';
import { machine, machineFacts, printFigure, report, Results, Row } from './lib/run-report';
import { closed, durationS, fixed, Group, num, selectedGroups, warmupS } from './lib/run-settings';
import { runOpenLoop } from './lib/open-loop';
import { Scenario } from './lib/scenario';
import { operationScenarios } from './scenarios/operations';
import { saleScenarios } from './scenarios/sales';
import { benchSplitEngine } from './scenarios/split-engine';
import { splitSaleScenarios } from './scenarios/split-sales';
import { BenchStack, startBenchStack, waitUntilIdle } from './lib/stack';
import { tokenScenarios } from './scenarios/tokens';
import { benchWebhooks } from './scenarios/webhooks';
import { benchLimiterCost } from './scenarios/limiter';
import { benchConsole } from './scenarios/console';
import { benchCapacity, CapacityResult, SaleKind } from './scenarios/capacity';
import { writeCapacityReport } from './capacity-doc';
import { endPauses, pausesLine, startPauses } from './lib/pauses';
import { addHistory, historyScenarios } from './scenarios/history';
import { benchRebills } from './scenarios/rebills';
import { acquirerScenarios } from './scenarios/acquirers';
import { RunningSimulator, simulatorVariables, startSimulator } from '../scripts/lib/simulators';

/**
 * `npm run bench`: every scenario against the real stack and, in the same run, against a bare
 * Node http server answering the same body, so the ratio is comparable across machines.
 * Non-HTTP figures (the split engine in process, the webhook pipeline) have a same-run baseline
 * of their own. Figures go to stdout and to bench/results/latest.{json,md} (bench/README.md; dated runs are kept
 * in bench/results/runs/).
 */
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

async function runScenarios(stack: BenchStack, r: Results, scenarios: Scenario[] = r.scenarios): Promise<void> {
  for (const s of scenarios) {
    await s.prepare?.(stack);
    const baseline = await startBaseline(s.baselineBody);
    const pipeline = s.barePipeline ? await startBarePipeline(stack.env, s.baselineBody) : undefined;
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
        const bare = pipeline && (await measure(pipeline.url + s.path, shape, s.body(stack)));
        r.rows.push({ scenario: s.name, shape: shapeName(shape), gateway, baseline: base, pipeline: bare, pauses });
        const bad = gateway.non2xx + gateway.errors;
        process.stdout.write(
          `${s.name.padEnd(16)} ${shapeName(shape).padEnd(18)} ${gateway.rps.toFixed(0).padStart(6)} req/s  p50 ${String(gateway.p50).padStart(4)} ms  p99 ${String(gateway.p99).padStart(4)} ms` +
            `  | baseline ${base.rps.toFixed(0).padStart(6)} req/s p99 ${base.p99} ms` +
            (bare ? `  | bare pipeline ${bare.rps.toFixed(0)} req/s p99 ${bare.p99} ms` : '') +
            `${bad ? `  !! ${bad} failed requests` : ''}\n` +
            pausesLine(pauses) +
            '\n',
        );
      }
    } finally {
      await baseline.stop();
      await pipeline?.stop();
    }
  }
}

async function main(): Promise<void> {
  const only = selectedGroups();
  // The acquirers group's production merchant reaches Cielo's simulator, started before the stack
  // so the apps are pointed at it (and stopped after).
  let cielo: RunningSimulator | undefined;
  if (only.has('acquirers')) {
    cielo = await startSimulator(repoRoot(), 'cielo', 0, { args: ['--void-spacing-ms', '0'] });
    Object.assign(process.env, simulatorVariables('cielo', cielo.url));
  }
  try {
    await runGroups(only, cielo);
  } finally {
    await cielo?.stop();
  }
}

async function runGroups(only: Set<Group>, cielo: RunningSimulator | undefined): Promise<void> {
  const r: Results = {
    scenarios: [
      ...(only.has('tokens') ? tokenScenarios(closed, fixed) : []),
      ...(only.has('sales') ? saleScenarios(closed, { ...fixed, rate: num('BENCH_SALE_RATE', 300) }) : []),
      ...(only.has('operations') ? operationScenarios(closed) : []),
      ...(only.has('split-sales') ? splitSaleScenarios(closed) : []),
      ...(cielo ? acquirerScenarios(closed, { url: cielo.url, pid: cielo.child.pid! }) : []),
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
      await runStackGroups(stack, only, r, cielo !== undefined);
    }
  } finally {
    const m = await machine(env).catch(() => undefined);
    await stack?.teardown();
    report(r, only, m);
  }
}

/** The groups that run on the shared stack, in an order where the heavy ones weigh on none after them. */
async function runStackGroups(stack: BenchStack, only: Set<Group>, r: Results, withCielo: boolean): Promise<void> {
  await runScenarios(stack, r);
  if (withCielo) acquirerRatio(r);
  if (only.has('webhooks')) await webhooks(stack, r);
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
  if (only.has('console')) await consoleGroup(stack, r);
}

/** The webhook pipeline's figures (BENCH_WEBHOOK_EVENTS events, default 5000 and 1000). */
async function webhooks(stack: BenchStack, r: Results): Promise<void> {
  const events = num('BENCH_WEBHOOK_EVENTS', 0);
  for (const f of await benchWebhooks(stack, events || 5000, events || 1000, num('BENCH_WEBHOOK_WARMUP_EVENTS', warmupS > 0 ? 500 : 0))) {
    r.figures.push(f);
    r.pipelineFailures += f.failures ?? 0;
    printFigure(f);
  }
}

/** The console's pages over BENCH_CONSOLE_DELIVERIES deliveries (default a million). */
async function consoleGroup(stack: BenchStack, r: Results): Promise<void> {
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

/** Issue 33's target: a production merchant's Cielo sales at least 0.8 × the same run's sandbox sales. */
function acquirerRatio(r: Results): void {
  const rps = (name: string) => r.rows.find((row) => row.scenario === name)?.gateway.rps ?? 0;
  const sandbox = rps('acq: sandbox sale');
  const viaCielo = rps('acq: Cielo sale');
  const ratio = sandbox ? viaCielo / sandbox : 0;
  const line = `acquirers: Cielo sales ${viaCielo.toFixed(0)} req/s = ${ratio.toFixed(2)} × the same run's sandbox sales (${sandbox.toFixed(0)} req/s); target ≥ 0.8: ${ratio >= 0.8 ? 'met' : 'MISSED'}`;
  r.notes.push(line);
  process.stdout.write(line + '\n');
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
 * Bounded data growth (docs/decisions/0010-sales-on-a-long-history.md): the sale scenarios on the
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

main().catch((e) => {
  process.stderr.write(`bench failed: ${(e as Error).stack ?? e}\n`);
  process.exit(1);
});
