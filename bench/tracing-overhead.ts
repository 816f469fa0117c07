import { spawn } from 'node:child_process';
import { createServer } from 'node:http';
import { AddressInfo } from 'node:net';
import { readFileSync, writeFileSync } from 'node:fs';
import { loadavg } from 'node:os';
import { join } from 'node:path';

/**
 * `npm run bench:tracing -- [--pairs 3] [--ratio 0.1]`: the sale scenarios of `npm run bench`
 * (BENCH_ONLY=sales) with tracing off and on, alternating, `pairs` times. With tracing on, every
 * app exports to an OTLP/HTTP receiver here that counts spans and drops them, sampled at `ratio`
 * by the gateway's default sampler. Writes the range of sales a second in each mode and the ratio of
 * each pair to bench/results/runs/<UTC minute>Z-tracing-overhead.{json,md}.
 */
interface Row {
  scenario: string;
  shape: string;
  gateway: { rps: number; p99: number };
}

interface Run {
  tracing: boolean;
  loadBefore: number;
  loadAfter: number;
  spans: number;
  rows: Row[];
}

const arg = (name: string, fallback: string) => {
  const i = process.argv.indexOf(`--${name}`);
  return i > 0 ? process.argv[i + 1] : fallback;
};
const root = join(__dirname, '..', '..');
const results = join(root, 'bench', 'results');

async function main(): Promise<void> {
  const pairs = Number(arg('pairs', '3'));
  const ratio = arg('ratio', '0.1');
  let spans = 0;
  const sink = createServer((req, res) => {
    let body = '';
    req.on('data', (c: Buffer) => (body += c.toString('utf8')));
    req.on('end', () => {
      spans += (body.match(/"spanId"/g) ?? []).length;
      res.writeHead(200, { 'content-type': 'application/json' }).end('{}');
    });
  });
  await new Promise<void>((r) => sink.listen(0, '127.0.0.1', r));
  const endpoint = `http://127.0.0.1:${(sink.address() as AddressInfo).port}`;
  const runs: Run[] = [];
  try {
    for (let i = 0; i < pairs * 2; i++) {
      const tracing = i % 2 === 1;
      const before = spans;
      const loadBefore = loadavg()[0];
      const env: Record<string, string> = tracing ? { OTEL_EXPORTER_OTLP_ENDPOINT: endpoint, OTEL_TRACES_SAMPLER_ARG: ratio } : {};
      await benchSales(env);
      const latest = JSON.parse(readFileSync(join(results, 'latest.json'), 'utf8')) as { rows: Row[] };
      const rows = latest.rows.filter((r) => r.scenario.startsWith('sale'));
      runs.push({ tracing, loadBefore, loadAfter: loadavg()[0], spans: spans - before, rows });
      process.stdout.write(
        `run ${i + 1}/${pairs * 2} tracing ${tracing ? 'on' : 'off'}: ${rows.map((r) => `${r.scenario} ${r.shape} ${r.gateway.rps.toFixed(0)}/s`).join('; ')}\n`,
      );
    }
  } finally {
    sink.close();
  }
  report(runs, ratio);
}

function benchSales(extra: Record<string, string>): Promise<void> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [join(root, 'dist', 'bench', 'run.js')], {
      env: { ...process.env, BENCH_ONLY: 'sales', ...extra },
      stdio: ['ignore', 'ignore', 'inherit'],
    });
    child.on('exit', (code) => (code === 0 ? resolve() : reject(new Error(`bench run exited ${code}`))));
  });
}

function report(runs: Run[], ratio: string): void {
  const closed = (r: Run) => r.rows.find((x) => x.scenario === 'sale (approved)' && x.shape.startsWith('closed'))?.gateway.rps ?? NaN;
  const off = runs.filter((r) => !r.tracing).map(closed);
  const on = runs.filter((r) => r.tracing).map(closed);
  const pairRatios = on.map((v, i) => v / off[i]);
  const range = (xs: number[]) => `${Math.min(...xs).toFixed(0)}–${Math.max(...xs).toFixed(0)}`;
  const loads = runs.map((r) => r.loadAfter);
  const md = [
    `# Tracing overhead (${new Date().toISOString()})`,
    '',
    `Sales a second (\`sale (approved)\`, closed loop, 64 connections), tracing off and on at ratio ${ratio}, alternating; load average ${Math.min(...loads).toFixed(1)}–${Math.max(...loads).toFixed(1)} at the runs' ends.`,
    '',
    '| run | tracing | sales/s | p99 ms | spans exported | load avg after |',
    '|---|---|---|---|---|---|',
    ...runs.map((r, i) => {
      const row = r.rows.find((x) => x.scenario === 'sale (approved)' && x.shape.startsWith('closed'));
      return `| ${i + 1} | ${r.tracing ? 'on' : 'off'} | ${closed(r).toFixed(1)} | ${row?.gateway.p99 ?? '—'} | ${r.spans} | ${r.loadAfter.toFixed(1)} |`;
    }),
    '',
    `Off: ${range(off)} sales/s. On: ${range(on)} sales/s. Each pair, on / off: ${pairRatios.map((x) => x.toFixed(3)).join(', ')}.`,
  ].join('\n');
  const iso = new Date().toISOString();
  const base = join(results, 'runs', `${iso.slice(0, 13)}${iso.slice(14, 16)}Z-tracing-overhead`);
  writeFileSync(`${base}.md`, `${md}\n`);
  writeFileSync(`${base}.json`, `${JSON.stringify({ ratio, runs, off, on, pairRatios }, null, 2)}\n`);
  process.stdout.write(`${md}\nwritten to ${base}.{md,json}\n`);
}

main().catch((e: unknown) => {
  process.stderr.write(`${e instanceof Error ? e.message : String(e)}\n`);
  process.exit(1);
});
