import { cpus, loadavg, totalmem } from 'node:os';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { Client } from 'pg';
import { repoRoot } from '../../scripts/lib/processes';
import { LoadResult } from './load';
import { ProcessPauses } from './pauses';
import { measureRoundTrip } from './round-trip';
import { Figure, Scenario, Target } from './scenario';
import { benchPostgres, benchRedis } from './stack';
import { durationS, Group, GROUPS, warmupS } from './run-settings';

/** What a bench run found, and its report: stdout and bench/results/latest.{json,md}. */
export interface Row {
  scenario: string;
  shape: string;
  gateway: LoadResult;
  baseline: LoadResult;
  /** The bare sale pipeline under the same load, for the sale scenarios (Scenario.barePipeline). */
  pipeline?: LoadResult;
  /** Event-loop delay and GC pauses of each app and of the load generator during the gateway's run. */
  pauses?: ProcessPauses[];
}

export interface Results {
  scenarios: Scenario[];
  rows: Row[];
  figures: Figure[];
  /** Lines under the HTTP table (what a scenario's afterLoad found). */
  notes: string[];
  /** Asynchronous work that never completed (payables, webhooks). */
  pipelineFailures: number;
}

/** As the apps read DATABASE_PREPARED_STATEMENTS (default on), and off behind the bench's PgBouncer unless set. */
function preparedStatementsOn(): boolean {
  const v = process.env.DATABASE_PREPARED_STATEMENTS;
  if (v === undefined || v === '') return benchPostgres() !== 'pgbouncer';
  return v === 'true' || v === '1';
}

export type Machine = Awaited<ReturnType<typeof machine>>;

export async function machine(env: NodeJS.ProcessEnv) {
  const pg = new Client({ connectionString: env.DATABASE_URL });
  await pg.connect();
  const pgVersion = (await pg.query<{ server_version: string }>('SHOW server_version')).rows[0].server_version;
  await pg.end();
  const redis = benchRedis(env);
  const redisVersion = /redis_version:(\S+)/.exec(await redis.info('server'))?.[1];
  redis.disconnect();
  return { ...machineFacts(), postgres: pgVersion, redis: redisVersion, loopbackRoundTrip: await measureRoundTrip() };
}

/** The 1, 5 and 15 minute load averages: above the core count, the run measured its neighbours too. */
const loadAverage = () => loadavg().map((l) => Math.round(l * 100) / 100);
/** Read as this module loads, before any group runs (the machine facts are gathered at the run's end). */
const loadAverageAtStart = loadAverage();

export const machineFacts = () => ({
  loadAverageAtStart,
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

export function printFigure(f: Figure): void {
  process.stdout.write(
    `${f.name}: ${f.value.toFixed(0)} ${f.unit} | baseline ${f.baseline.toFixed(0)} ${f.unit}${f.detail ? ` | ${f.detail}` : ''}\n`,
  );
}

const fmt = (n: number) => n.toLocaleString('en-US', { maximumFractionDigits: 0 });

export function report(results: Results, only: Set<Group>, m: Machine | undefined): void {
  const { rows, pipelineFailures } = results;
  const dir = join(repoRoot(), 'bench', 'results');
  mkdirSync(dir, { recursive: true });
  const failures = rows.reduce((n, r) => n + r.gateway.non2xx + r.gateway.errors, 0) + pipelineFailures;
  const json = latestJson(results, only, m, failures);
  const lines = reportLines(results, only, m, failures);
  writeFileSync(join(dir, 'latest.json'), json);
  writeFileSync(join(dir, 'latest.md'), lines.join('\n') + '\n');
  // Every run is also kept under its own name, so that figures compared across runs stay files.
  const runs = join(dir, 'runs');
  mkdirSync(runs, { recursive: true });
  const groups = only.size === GROUPS.length ? 'all' : [...only].join('-');
  // BENCH_LABEL names what was measured when runs of two builds alternate (e.g. a commit).
  const label = process.env.BENCH_LABEL?.replace(/[^\w.-]+/g, '-');
  const name = `${new Date().toISOString().slice(0, 16).replace(':', '')}Z-${groups}${label ? `-${label}` : ''}`;
  writeFileSync(join(runs, `${name}.json`), json);
  writeFileSync(join(runs, `${name}.md`), lines.join('\n') + '\n');
  process.stdout.write('\n' + lines.join('\n') + '\n');
  if (failures) process.exitCode = 1;
}

/** bench/results/latest.json: the run's settings, rows, notes and figures. */
function latestJson({ rows, figures, notes }: Results, only: Set<Group>, m: Machine | undefined, failures: number): string {
  return (
    JSON.stringify(
      {
        at: new Date().toISOString(),
        machine: m,
        loadAverageAtEnd: loadAverage(),
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
    ) + '\n'
  );
}

/** The run's report in markdown, one line an element: the setting, the HTTP table, notes, figures and verdicts. */
function reportLines({ scenarios, rows, figures, notes }: Results, only: Set<Group>, m: Machine | undefined, failures: number): string[] {
  const partial = only.size < GROUPS.length ? ` Groups run: ${[...only].join(', ')} (BENCH_ONLY).` : '';
  const limiter = process.env.RATE_LIMIT_ENABLED === 'false' ? ' Rate limiter off (RATE_LIMIT_ENABLED=false).' : '';
  const database =
    (benchPostgres() === 'pgbouncer' ? ' Apps through PgBouncer in transaction mode (BENCH_POSTGRES=pgbouncer).' : '') +
    (preparedStatementsOn() ? '' : ' Named statements off (DATABASE_PREPARED_STATEMENTS=false).');
  return [
    `Measured ${new Date().toISOString().slice(0, 10)} on ${m?.cores} cores (${m?.cpu}), ${m?.memoryGiB} GiB, Node ${m?.node}, Postgres ${m?.postgres}, Redis ${m?.redis}; ` +
      `everything co-located (load generator, four apps, Postgres, Redis). ${durationS} s per run after a ${warmupS} s warm-up.${partial}${limiter}${database}` +
      ` Load average (1, 5, 15 min) at the start ${m?.loadAverageAtStart?.join(', ')}, at the end ${loadAverage().join(', ')}.` +
      (m?.loopbackRoundTrip
        ? ` One message between two processes on this host (loopback TCP, one byte there and back, one at a time): ` +
          `${fmt(m.loopbackRoundTrip.perSecond)} round trips/s, ${m.loopbackRoundTrip.callerCpuUs.toFixed(0)} µs of the caller's CPU each.`
        : ''),
    ...(rows.length
      ? [
          '',
          '| scenario | load | gateway req/s | p50 ms | p99 ms | baseline req/s | baseline p99 ms | gateway / baseline req/s | bare pipeline req/s | bare pipeline p99 ms | gateway / pipeline req/s | gateway / pipeline p99 |',
          '|---|---|---|---|---|---|---|---|---|---|---|---|',
          ...rows.map(
            (r) =>
              `| ${r.scenario} | ${r.shape} | ${r.gateway.rps.toFixed(0)} | ${r.gateway.p50} | ${r.gateway.p99} | ${r.baseline.rps.toFixed(0)} | ${r.baseline.p99} | ${(r.gateway.rps / r.baseline.rps).toFixed(3)} | ` +
              (r.pipeline
                ? `${r.pipeline.rps.toFixed(0)} | ${r.pipeline.p99} | ${(r.gateway.rps / r.pipeline.rps).toFixed(3)} | ${(r.gateway.p99 / r.pipeline.p99).toFixed(2)} |`
                : '– | – | – | – |'),
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
}
