/**
 * The whole gateway's CPU per sale, for any checkout that has `npm start` (this one, or an older
 * commit's worktree, so the two can be measured in alternating runs the same hour):
 *
 *   node dist/bench/cpu-per-sale.js [--tree <checkout>] [--label <name>] [--seconds 20] [--connections 32]
 *
 * It starts the checkout's own stack as `npm start` does (its built `dist/scripts/start.js`, on a
 * database and queue prefix of the run's own), measures the stack's idle CPU, then drives sales
 * with an inline card and a urlReturn to a listener in this process that answers at once, and
 * waits until every approved sale's webhook has arrived and the stack is idle again. CPU is read
 * from /proc: every process the launcher started (apps, simulators), every Postgres and Redis
 * process; the load generator (this process) is not counted. CPU per sale is the run's CPU less
 * the idle rate over the same time, over the approved sales. The report goes to
 * bench/results/runs/<minute>Z-cpu-per-sale-<label>.{md,json}.
 */
import { ChildProcess, spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { loadavg } from 'node:os';
import { join, resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { CpuSnapshot, cpuSecondsBetween, cpuSecondsOf, serverPids } from './lib/cpu';
import { runLoad } from './lib/load';
import { WebhookListener } from './lib/listener';
import { saleRequest } from './scenarios/sales';
import { freePort } from '../scripts/lib/local-servers';
import { DEFAULT_DATABASE_URL, withDatabase } from '../scripts/lib/database';
import { repoRoot, waitUntil } from '../scripts/lib/processes';

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** Every process descending from `root` (the launcher and what it started), from /proc's parent links. */
function descendants(root: number): number[] {
  const children = new Map<number, number[]>();
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const stat = readFileSync(`/proc/${entry}/stat`, 'utf8');
      const ppid = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
      children.set(ppid, [...(children.get(ppid) ?? []), Number(entry)]);
    } catch {
      // gone meanwhile
    }
  }
  const out: number[] = [];
  const walk = (pid: number) => {
    out.push(pid);
    for (const c of children.get(pid) ?? []) walk(c);
  };
  walk(root);
  return out;
}

/** What a process is, for the breakdown: an app's name from its entry path, else its command. */
function labelOf(pid: number): string {
  try {
    const cmd = readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0');
    const app = cmd.map((a) => /(?:apps|scripts|bench)\/([\w-]+)\//.exec(a)?.[1]).find(Boolean);
    if (app) return app;
    return readFileSync(`/proc/${pid}/comm`, 'utf8').trim();
  } catch {
    return '?';
  }
}

/** CPU seconds so far of the stack (the launcher's tree) and the servers; a process gone since counts as its last reading. */
class CpuMeter {
  private readonly last: CpuSnapshot = new Map();
  constructor(private readonly launcher: number) {}
  read(): CpuSnapshot {
    for (const pid of [...descendants(this.launcher), ...serverPids()]) {
      const s = cpuSecondsOf(pid);
      if (s > 0) this.last.set(pid, { label: this.last.get(pid)?.label ?? labelOf(pid), s });
    }
    return new Map([...this.last].map(([pid, v]) => [pid, { ...v }]));
  }
  total(): number {
    return [...this.read().values()].reduce((a, b) => a + b.s, 0);
  }
}

interface Options {
  tree: string;
  label: string;
  seconds: number;
  connections: number;
}

function options(): Options {
  const { values } = parseArgs({
    options: {
      tree: { type: 'string', default: repoRoot() },
      label: { type: 'string' },
      seconds: { type: 'string', default: '20' },
      connections: { type: 'string', default: '32' },
    },
  });
  const tree = resolve(values.tree ?? repoRoot());
  return {
    tree,
    label: values.label ?? (tree === repoRoot() ? 'here' : tree.split('/').pop()!),
    seconds: Number(values.seconds),
    connections: Number(values.connections),
  };
}

/** The checkout's own `npm start` (already built), on a database, queue prefix and ports of this run's own. */
async function launch(tree: string): Promise<{ launcher: ChildProcess; base: string; dataDir: string; output: () => string }> {
  const runId = `${Date.now().toString(36)}${randomBytes(2).toString('hex')}`;
  const dataDir = join('/tmp', `gw-cpu-${runId}`);
  const port = await freePort();
  const env = {
    ...process.env,
    DATA_DIR: dataDir,
    PORT: String(port),
    CONSOLE_PORT: String(await freePort()),
    DATABASE_URL: withDatabase(process.env.DATABASE_URL ?? DEFAULT_DATABASE_URL, `gw_cpu_${runId}`),
    QUEUE_PREFIX: `gwc${runId}`,
  };
  const launcher = spawn(process.execPath, [join(tree, 'dist/scripts/start.js')], { cwd: tree, env, stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  launcher.stdout.on('data', (d: Buffer) => (out += d.toString()));
  launcher.stderr.on('data', (d: Buffer) => (out += d.toString()));
  const base = `http://127.0.0.1:${port}`;
  const healthy = waitUntil(
    'the stack to answer /health',
    async () => {
      if (launcher.exitCode !== null) throw new Error(`the stack did not start:\n${out}`);
      return (await fetch(`${base}/health`).catch(() => undefined))?.ok === true;
    },
    180_000,
    500,
  );
  await healthy.catch((e: unknown) => {
    launcher.kill('SIGINT');
    throw e;
  });
  return { launcher, base, dataDir, output: () => out };
}

interface Measured {
  sales: number;
  salesPerS: number;
  non2xx: number;
  webhooksArrived: number;
  elapsedS: number;
  cpuS: number;
  idleCpuPerS: number;
  cpuMsPerSale: number;
  /** Before the idle rate is taken off. */
  cpuMsPerSaleByProcess: Record<string, number>;
  loadAverage: { start: number[]; end: number[] };
}

async function measure(o: Options, base: string, dataDir: string, meter: CpuMeter, listener: WebhookListener): Promise<Measured> {
  const merchant = JSON.parse(readFileSync(join(dataDir, 'sandbox-merchant.json'), 'utf8')) as { merchantId: string; merchantKey: string };
  const verification = { merchantId: merchant.merchantId, merchantKey: merchant.merchantKey };
  let n = 0;
  const body = (run: string) => () =>
    saleRequest(verification, `CPU-${run}-${n++}`, undefined, { urlReturn: `${listener.url}?run=${run}&sent=${Date.now()}` });
  // Warm-up: the first sales pay for connections, compiled code and caches.
  await runLoad(`${base}/v1/receiver`, { connections: 8, durationS: 3 }, body('warm'));
  await sleep(5_000);
  // Idle rate: what the stack spends doing nothing (pollers, health checks, timers).
  const idleStart = { at: performance.now(), s: meter.total() };
  await sleep(10_000);
  const idleCpuPerS = (meter.total() - idleStart.s) / ((performance.now() - idleStart.at) / 1000);
  const loadStart = loadavg();
  const before = meter.read();
  const start = { at: performance.now(), s: meter.total() };
  const arrivals = listener.track('m', Number.MAX_SAFE_INTEGER);
  const load = await runLoad(`${base}/v1/receiver`, { connections: o.connections, durationS: o.seconds }, body('m'));
  // Every approved sale's webhook arrives (settlement runs beside it), the last requests' included:
  // done once at least the load's 2xx have arrived and nothing more came for 2 s.
  let seen = -1;
  await waitUntil(
    'every webhook',
    async () => {
      const now = arrivals.latencies.size;
      const quiet = now === seen && now >= load.requests - load.non2xx - load.errors;
      seen = now;
      return quiet || (await sleep(2_000), false);
    },
    120_000,
    0,
  ).catch(() => undefined);
  const sales = arrivals.latencies.size;
  const elapsedS = (performance.now() - start.at) / 1000;
  const cpuS = meter.total() - start.s;
  const byProcess = cpuSecondsBetween(before, meter.read()).byLabel;
  return {
    sales,
    salesPerS: load.rps,
    non2xx: load.non2xx,
    webhooksArrived: arrivals.latencies.size,
    elapsedS,
    cpuS,
    idleCpuPerS,
    cpuMsPerSale: ((cpuS - idleCpuPerS * elapsedS) / sales) * 1000,
    cpuMsPerSaleByProcess: Object.fromEntries(Object.entries(byProcess).map(([k, v]) => [k, (v / sales) * 1000])),
    loadAverage: { start: loadStart, end: loadavg() },
  };
}

function report(o: Options, m: Measured): void {
  const result = { label: o.label, tree: o.tree, measuredAt: new Date().toISOString(), ...m };
  const dir = join(repoRoot(), 'bench', 'results', 'runs');
  mkdirSync(dir, { recursive: true });
  const file = join(dir, `${result.measuredAt.slice(0, 16).replace(/:/g, '')}Z-cpu-per-sale-${o.label}`);
  writeFileSync(`${file}.json`, JSON.stringify(result, null, 2) + '\n');
  const la = (l: number[]) => l.map((x) => x.toFixed(2)).join(', ');
  writeFileSync(
    `${file}.md`,
    `CPU per sale of ${o.label} (${o.tree}), measured ${result.measuredAt}; load average (1, 5, 15 min) ${la(m.loadAverage.start)} at the start, ${la(m.loadAverage.end)} at the end.\n\n` +
      `| sales approved | sales/s | webhooks arrived | CPU s (stack, Postgres, Redis) | idle CPU s/s | CPU ms per sale |\n|---|---|---|---|---|---|\n` +
      `| ${m.sales} | ${m.salesPerS.toFixed(0)} | ${m.webhooksArrived} | ${m.cpuS.toFixed(2)} over ${m.elapsedS.toFixed(1)} s | ${m.idleCpuPerS.toFixed(3)} | ${m.cpuMsPerSale.toFixed(3)} |\n\n` +
      `By process, ms per sale (idle not taken off): ${Object.entries(m.cpuMsPerSaleByProcess)
        .sort((a, b) => b[1] - a[1])
        .map(([k, v]) => `${k} ${v.toFixed(3)}`)
        .join(', ')}.\n`,
  );
  process.stdout.write(`${JSON.stringify(result)}\n`);
}

async function main(): Promise<void> {
  const o = options();
  const { launcher, base, dataDir } = await launch(o.tree);
  const listener = await WebhookListener.start(0);
  try {
    report(o, await measure(o, base, dataDir, new CpuMeter(launcher.pid!), listener));
  } finally {
    await listener.close();
    launcher.kill('SIGINT');
    await new Promise((r) => launcher.once('exit', r));
  }
}

main().catch((e) => {
  process.stderr.write(`${(e as Error).stack ?? String(e)}\n`);
  process.exit(1);
});
