import { cpus, totalmem } from 'node:os';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { Client } from 'pg';
import Redis from 'ioredis';
import { repoRoot } from '../scripts/lib/processes';
import { startBaseline } from './lib/baseline';
import { LoadResult, LoadShape, runLoad } from './lib/load';
import { runOpenLoop } from './lib/open-loop';
import { Scenario, Target } from './lib/scenario';
import { saleScenarios } from './scenarios/sales';
import { startBenchStack } from './lib/stack';
import { tokenScenarios } from './scenarios/tokens';

/**
 * `npm run bench`: every scenario against the real stack and, in the same run, against a bare
 * Node http server answering the same body, so the ratio is comparable across machines.
 * Figures go to stdout and to bench/results/latest.{json,md} (the README quotes the latter).
 */
const num = (name: string, fallback: number) => (process.env[name] ? Number(process.env[name]) : fallback);
const durationS = num('BENCH_DURATION_S', 10);
const warmupS = num('BENCH_WARMUP_S', 3);
const closed: LoadShape = { connections: num('BENCH_CONNECTIONS', 64), durationS };
const fixed: LoadShape = { connections: 64, durationS, rate: num('BENCH_RATE', 800) };

interface Row {
  scenario: string;
  shape: string;
  gateway: LoadResult;
  baseline: LoadResult;
}

async function measure(url: string, shape: LoadShape, body: () => string): Promise<LoadResult> {
  // Closed loop: autocannon. Fixed rate: our open-loop generator (autocannon's rate limiting is
  // bursty enough to give even the bare baseline a ~20 ms p99 here).
  const run = (s: LoadShape) => (s.rate ? runOpenLoop(url, s.rate, s.durationS, s.connections, body) : runLoad(url, s, body));
  // Warm-up at the same shape: JIT, pools and connections, so the figure is steady state.
  await run({ ...shape, durationS: warmupS });
  return run(shape);
}

const shapeName = (s: LoadShape) => (s.rate ? `fixed ${s.rate}/s` : `closed ${s.connections} conns`);

async function machine(env: NodeJS.ProcessEnv) {
  const pg = new Client({ connectionString: env.DATABASE_URL });
  await pg.connect();
  const pgVersion = (await pg.query<{ server_version: string }>('SHOW server_version')).rows[0].server_version;
  await pg.end();
  const redis = new Redis(env.REDIS_URL as string);
  const redisVersion = /redis_version:(\S+)/.exec(await redis.info('server'))?.[1];
  redis.disconnect();
  return { cpu: cpus()[0]?.model, cores: cpus().length, memoryGiB: Math.round(totalmem() / 2 ** 30), node: process.version, postgres: pgVersion, redis: redisVersion };
}

function verdict(s: Scenario, t: Target, rows: Row[]): string {
  const row = rows.find((r) => r.scenario === s.name && (t.shape === 'closed' ? r.shape.startsWith('closed') : r.shape.startsWith('fixed')));
  if (!row) return 'not measured';
  return t.shape === 'closed'
    ? `${row.gateway.rps.toFixed(0)} req/s vs target ≥ ${t.rps}: ${row.gateway.rps >= t.rps ? 'met' : 'MISSED'}`
    : `p99 ${row.gateway.p99} ms vs target < ${t.p99Ms} ms: ${row.gateway.p99 < t.p99Ms ? 'met' : 'MISSED'}`;
}

async function main(): Promise<void> {
  const scenarios: Scenario[] = [...tokenScenarios(closed, fixed), ...saleScenarios(closed, { ...fixed, rate: num('BENCH_SALE_RATE', 300) })];
  const stack = await startBenchStack();
  const rows: Row[] = [];
  let env = stack.env;
  try {
    env = stack.env;
    for (const s of scenarios) {
      await s.prepare?.(stack);
      const baseline = await startBaseline(s.baselineBody);
      try {
        for (const shape of s.shapes) {
          const gateway = await measure(stack.baseUrl + s.path, shape, s.body(stack));
          const base = await measure(baseline.url + s.path, shape, s.body(stack));
          rows.push({ scenario: s.name, shape: shapeName(shape), gateway, baseline: base });
          const bad = gateway.non2xx + gateway.errors;
          process.stdout.write(
            `${s.name.padEnd(16)} ${shapeName(shape).padEnd(18)} ${gateway.rps.toFixed(0).padStart(6)} req/s  p50 ${String(gateway.p50).padStart(4)} ms  p99 ${String(gateway.p99).padStart(4)} ms` +
              `  | baseline ${base.rps.toFixed(0).padStart(6)} req/s p99 ${base.p99} ms${bad ? `  !! ${bad} failed requests` : ''}\n`,
          );
        }
      } finally {
        await baseline.stop();
      }
    }
  } finally {
    const m = await machine(env).catch(() => undefined);
    await stack.teardown();
    report(scenarios, rows, m);
  }
}

function report(scenarios: Scenario[], rows: Row[], m: Record<string, unknown> | undefined): void {
  const dir = join(repoRoot(), 'bench', 'results');
  mkdirSync(dir, { recursive: true });
  const failures = rows.reduce((n, r) => n + r.gateway.non2xx + r.gateway.errors, 0);
  writeFileSync(join(dir, 'latest.json'), JSON.stringify({ at: new Date().toISOString(), machine: m, rows, failures }, null, 2) + '\n');
  const lines = [
    `Measured ${new Date().toISOString().slice(0, 10)} on ${m?.cores} cores (${m?.cpu}), ${m?.memoryGiB} GiB, Node ${m?.node}, Postgres ${m?.postgres}, Redis ${m?.redis}; ` +
      `everything co-located (load generator, four apps, Postgres, Redis). ${durationS} s per run after a ${warmupS} s warm-up.`,
    '',
    '| scenario | load | gateway req/s | p50 ms | p99 ms | baseline req/s | baseline p99 ms | gateway / baseline req/s |',
    '|---|---|---|---|---|---|---|---|',
    ...rows.map(
      (r) =>
        `| ${r.scenario} | ${r.shape} | ${r.gateway.rps.toFixed(0)} | ${r.gateway.p50} | ${r.gateway.p99} | ${r.baseline.rps.toFixed(0)} | ${r.baseline.p99} | ${(r.gateway.rps / r.baseline.rps).toFixed(3)} |`,
    ),
    '',
    ...scenarios.flatMap((s) => [s.target, ...(s.extraTarget ? [s.extraTarget] : [])].map((t) => `- ${s.name}: ${verdict(s, t, rows)}`)),
    failures ? `\n**${failures} requests failed during the run.**` : '',
  ];
  writeFileSync(join(dir, 'latest.md'), lines.join('\n') + '\n');
  process.stdout.write('\n' + lines.join('\n') + '\n');
  if (failures) process.exitCode = 1;
}

main().catch((e) => {
  process.stderr.write(`bench failed: ${(e as Error).stack ?? e}\n`);
  process.exit(1);
});
