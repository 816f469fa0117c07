/**
 * `npm run chaos`: the gateway as deployed (two replicas of each app on a sale's path, both
 * acquirer simulators, a listener that fails and dawdles), a mixed load for `--duration` seconds,
 * and faults on a schedule drawn from `--seed`: replicas SIGKILLed every 10–20 s, Redis and
 * Postgres restarted, Postgres gone for longer than the event retry budget, an acquirer that acts
 * and stops answering, Redis slowed down. Then it checks that nothing was lost or done twice,
 * prints a table, writes chaos-report.json and exits 1 on any failure, naming the transaction.
 * docs/operations/chaos.md says how to read it.
 */
import { randomInt } from 'node:crypto';
import { chmodSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { repoRoot, sleep } from '../lib/processes';
import { CheckResult, recordChecks, RunDue } from './checks';
import { cliCheck, drain } from './drain';
import { logsClean } from './log-scan';
import { describe, FaultRecord, inject, planFaults, PlannedFault } from './faults';
import { ChaosListener } from './listener';
import { Call, leaksCardData, Load } from './load';
import { Random } from './random';
import { ACQUIRER_SECRETS, ChaosStack, Merchant } from './stack';
import { Figures, loadFigures, printTable, recordFigures, recovery } from './report';

interface Options {
  durationS: number;
  rate: number;
  seed: number;
  report: string;
  /** Write the load figures into bench/results/chaos/. */
  record: boolean;
  keep: boolean;
}

const USAGE =
  'usage: npm run chaos -- [--duration <s, default 900>] [--rate <flows/s, default 20>] [--seed <n>] [--report <file>] [--record] [--keep]';

function parseArgs(argv: string[]): Options {
  const o: Options = { durationS: 900, rate: 20, seed: randomInt(1, 2 ** 31), report: 'chaos-report.json', record: false, keep: false };
  for (let i = 0; i < argv.length; i++) {
    const [flag, inline] = argv[i].split(/=(.*)/s);
    const value = () => {
      const v = inline ?? argv[++i];
      if (v === undefined) throw new Error(`${flag} needs a value. ${USAGE}`);
      return v;
    };
    const whole = (min: number, max: number) => {
      const v = value();
      if (!/^\d+$/.test(v) || Number(v) < min || Number(v) > max)
        throw new Error(`${flag} must be a whole number from ${min} to ${max} (got "${v}")`);
      return Number(v);
    };
    if (flag === '--duration') o.durationS = whole(60, 24 * 3600);
    else if (flag === '--rate') o.rate = whole(1, 500);
    else if (flag === '--seed') o.seed = whole(0, 2 ** 32 - 1);
    else if (flag === '--report') o.report = value();
    else if ((flag === '--record' || flag === '--keep') && inline !== undefined) throw new Error(`${flag} takes no value. ${USAGE}`);
    else if (flag === '--record') o.record = true;
    else if (flag === '--keep') o.keep = true;
    else throw new Error(`unknown argument "${argv[i]}". ${USAGE}`);
  }
  return o;
}

/**
 * The budgets the run gives the stack. The full run (15 minutes or more) keeps the event retry
 * budget of production (10 attempts from 1 s, given up after about 8.5 minutes) and takes Postgres
 * away for 10 minutes; a shorter run shortens that budget (4 attempts from 0.5 s, 3.5 s) so its
 * shorter outage still outlasts it. Both shorten what would otherwise make the checks wait for
 * hours: the listener's retry schedule, the sweeps' grace, the reconcilers' intervals.
 */
function budgets(full: boolean): { env: Record<string, string>; outageS: number; quietS: number; drainS: number } {
  const env: Record<string, string> = {
    WEBHOOK_SCHEDULE_SCALE: '0.01',
    WEBHOOK_SWEEP_INTERVAL_MS: '5000',
    WEBHOOK_SWEEP_GRACE_S: '10',
    WEBHOOK_EVENT_SWEEP_GRACE_S: '20',
    SETTLEMENT_SWEEP_INTERVAL_MS: '5000',
    SETTLEMENT_SWEEP_GRACE_S: '20',
    SALE_RECONCILE_INTERVAL_MS: '5000',
    SALE_ORPHAN_AFTER_S: '30',
    CLAIM_STALE_AFTER_S: '15',
    REBILL_RESEND_AFTER_S: '10',
    ...(full ? {} : { EVENT_RETRY_ATTEMPTS: '4', EVENT_RETRY_BACKOFF_MS: '500' }),
  };
  // A budget set in the environment wins (e.g. a sweep's grace of a day: does the run then see the loss?).
  for (const k of Object.keys(env)) if (process.env[k]) env[k] = process.env[k];
  return full ? { env, outageS: 600, quietS: 60, drainS: 900 } : { env, outageS: 18, quietS: 15, drainS: 300 };
}

const say = (line = '') => process.stdout.write(line + '\n');

async function main(): Promise<number> {
  const o = parseArgs(process.argv.slice(2));
  const full = o.durationS >= 900;
  const b = budgets(full);
  const quietS = Math.min(b.quietS, Math.floor(o.durationS / 4));
  const outageS = full ? b.outageS : Math.min(b.outageS, Math.floor(o.durationS / 5));
  const random = new Random(o.seed);
  const plan = planFaults(random, o.durationS, quietS, outageS);
  const root = repoRoot();
  // A folder of its own, however many runs start at once.
  const dir = mkdtempSync(join(tmpdir(), `gateway-chaos-${new Date().toISOString().replace(/[:.]/g, '').slice(0, 15)}-${o.seed}-`));
  // The postgres user runs the cluster in it (mkdtemp makes it 0700).
  chmodSync(dir, 0o755);
  announce(o, b.env, plan, quietS, dir);

  const stack = await ChaosStack.start(root, dir, b.env, say);
  // Ctrl-C (or CI's timeout): the stack and the run's servers are stopped, the folder kept.
  for (const signal of ['SIGINT', 'SIGTERM'] as const) {
    process.once(signal, () => {
      say(`\n${signal}: stopping the stack; the run's files stay in ${dir}`);
      void stack.stop().finally(() => process.exit(130));
    });
  }
  let listener: ChaosListener | undefined;
  let failed = true;
  try {
    say(`stack up: api on ${stack.apiUrls.join(' and ')}`);
    const merchants: Record<Merchant['kind'], Merchant> = {
      sandbox: stack.sandbox,
      cielo: await stack.merchant('cielo'),
      erede: await stack.merchant('erede'),
    };
    await stack.unlimited(stack.sandbox.merchantId);
    listener = await ChaosListener.start({ seed: o.seed, failShare: 0.1, slowShare: 0.05, slowMs: 1_500, leaks: leaksCardData });
    const l = listener;
    const load = new Load(o.seed, stack.apiUrls, merchants, (m) => l.urlFor(m.merchantId, m.webhookSecret), `C${o.seed.toString(36)}`);
    const { start, records, runsDue, runDueFailures } = await loadUnderFaults(stack, load, plan, o, b.drainS);

    const all = Object.values(merchants);
    const drained = await drain(stack, l, all, b.drainS);
    const figures = loadFigures(load.calls, records, start, quietS, o.durationS);
    const checks = [
      ...(await allChecks(stack, load, l, all, dir, runsDue, apiDownFrom(records))),
      runChecks(stack, records, figures.quietSalesPerS, o.rate, runDueFailures),
    ];
    printTable(checks, records, start, load.calls, figures, drained);
    failed = checks.some((c) => !c.ok);
    writeReport(o, { budgets: b.env, outageS, start, failed, checks, records, calls: load.calls, figures, drained, dir });
    if (o.record)
      recordFigures(root, start, { seed: o.seed, durationS: o.durationS, rate: o.rate, ok: !failed, figures, loadavg: loadavg() });
  } finally {
    await listener?.close();
    await stack.stop().catch((e: Error) => say(`stopping the stack: ${e.message}`));
    if (!failed && !o.keep) rmSync(dir, { recursive: true, force: true });
    else say(`the run's logs and servers' files are kept in ${dir}`);
  }
  return failed ? 1 : 0;
}

function writeReport(
  o: Options,
  r: {
    budgets: Record<string, string>;
    outageS: number;
    start: number;
    failed: boolean;
    checks: CheckResult[];
    records: FaultRecord[];
    calls: Call[];
    figures: Figures;
    drained: number | undefined;
    dir: string;
  },
): void {
  const report = {
    seed: o.seed,
    durationS: o.durationS,
    rate: o.rate,
    budgets: r.budgets,
    outageS: r.outageS,
    startedAt: new Date(r.start).toISOString(),
    ok: !r.failed,
    checks: r.checks,
    faults: r.records.map((f) => ({ ...f, at: new Date(f.startedAt).toISOString(), recoveredAfterS: recovery(f, r.calls) })),
    figures: r.figures,
    drainedAfterS: r.drained,
    loadavg: loadavg(),
    files: r.dir,
  };
  mkdirSync(dirname(resolve(o.report)), { recursive: true });
  writeFileSync(resolve(o.report), JSON.stringify(report, null, 2) + '\n');
  say(`report: ${resolve(o.report)}`);
}

function announce(o: Options, env: Record<string, string>, plan: PlannedFault[], quietS: number, dir: string): void {
  const kills = plan.filter((p) => p.kind === 'kill');
  say(`chaos run: seed ${o.seed}, ${o.durationS} s of load at ${o.rate} flows/s (the first ${quietS} s without faults); files in ${dir}`);
  say(
    `budgets: ${Object.entries(env)
      .map(([k, v]) => `${k}=${v}`)
      .join(' ')}`,
  );
  say('fault schedule (s after the load starts):');
  for (const f of plan.filter((p) => p.kind !== 'kill')) say(`  ${String(f.atS).padStart(5)}  ${describe(f)}`);
  say(`  and ${kills.length} SIGKILLs: ${kills.map((f) => `${f.atS} ${f.target}`).join(', ')}`);
}

/**
 * The load for the run's duration, the faults at their times, and rebill cycles falling due
 * meanwhile (tomorrow's and the next day's, charged early with rebill:run-due at 40 % and 80 %);
 * resolves once every fault is over, every killed replica back, and every flow has ended. The
 * three server faults run one after another, each no sooner than 6 s after the one before is over.
 */
async function loadUnderFaults(
  stack: ChaosStack,
  load: Load,
  plan: PlannedFault[],
  o: Options,
  drainS: number,
): Promise<{ start: number; records: FaultRecord[]; runsDue: RunDue[]; runDueFailures: string[] }> {
  // Let every merchant's cached credentials and limits settle before the clock starts.
  await sleep(1_500);
  const start = Date.now();
  const at = () => `  ${((Date.now() - start) / 1000).toFixed(0).padStart(5)} s`;
  const records: FaultRecord[] = [];
  const run = async (f: PlannedFault, notBefore: number) => {
    await sleep(Math.max(start + f.atS * 1000, notBefore) - Date.now());
    const record: FaultRecord = { ...f, startedAt: Date.now() };
    records.push(record);
    say(`${at()}  ${describe(f)}`);
    try {
      await inject(stack, f, record, say);
      if (f.kind === 'kill' && !record.recoveredAt) await replicaBack(stack, f.target!, record, start + (o.durationS + drainS) * 1000);
    } catch (e) {
      record.error = (e as Error).message;
      say(`${at()}  ${describe(f)} FAILED: ${record.error}`);
    }
    return record.endedAt ?? Date.now();
  };
  const servers = plan.filter((f) => SERVER_FAULTS.includes(f.kind));
  const faults = [
    ...plan.filter((f) => !SERVER_FAULTS.includes(f.kind)).map((f) => run(f, 0)),
    (async () => {
      let free = 0;
      for (const f of servers) free = (await run(f, free)) + 6_000;
    })(),
  ];
  const runsDue: RunDue[] = [];
  const runDueFailures: string[] = [];
  /** Passes that outlived their own --timeout-s: not a loss (a later pass charges the same cycles), but said. */
  const runDueStuck: string[] = [];
  const due = [0.4, 0.8].map(async (share, k) => {
    await sleep(start + share * o.durationS * 1000 - Date.now());
    const asOf = new Date(Date.now() + (k + 1) * 86_400_000 + 60_000).toISOString();
    // Tried until it runs through (Postgres may be away when it starts), at most until two minutes
    // after the load; one that never ran through fails the run.
    while (Date.now() < start + (o.durationS + 120) * 1000) {
      const startedAt = Date.now();
      // Its own --timeout-s bounds the wait for outcomes; one still running 30 s past it is stuck.
      const r = await stack.cliRaw<{ opened?: number }>(['rebill:run-due', '--as-of', asOf, '--timeout-s', '60'], 90_000);
      const how = r.code === null ? 'still running 90 s later, killed' : `exit ${r.code}`;
      say(`${at()}  rebill:run-due --as-of ${asOf}: ${how}, ${r.json?.opened ?? 0} charges opened`);
      if (r.code === null) runDueStuck.push(`rebill:run-due --as-of ${asOf} started at ${new Date(startedAt).toISOString()}: ${how}`);
      if (r.code === 0) return runsDue.push({ startedAt, asOf, cycles: k + 2 });
      await sleep(15_000);
    }
    runDueFailures.push(`rebill:run-due --as-of ${asOf} never ran through`);
  });
  await load.drive(o.rate, start + o.durationS * 1000);
  const skipped = load.skipped ? `, ${load.skipped} flows not started (too many in flight)` : '';
  say(`load over: ${load.calls.length} requests${skipped}; waiting for the faults and flows in flight`);
  await Promise.all([...faults, ...due, load.settle()]);
  for (const line of runDueStuck) say(`noticed: ${line}`);
  return { start, records, runsDue, runDueFailures };
}

const SERVER_FAULTS: PlannedFault['kind'][] = ['redis-restart', 'postgres-restart', 'postgres-outage'];

/** Whether an api replica was down (killed, not back yet) at some moment between `from` and `to`. */
function apiDownFrom(records: FaultRecord[]): (api: string, from: number, to: number) => boolean {
  return (api, from, to) =>
    records.some((r) => r.kind === 'kill' && r.target === api && r.startedAt <= to && (r.recoveredAt ?? Infinity) >= from);
}

/** The run itself: every fault injected, every killed replica back, the launcher up, and sales served in the quiet head. */
function runChecks(stack: ChaosStack, records: FaultRecord[], quietSalesPerS: number, rate: number, more: string[]): CheckResult {
  const failures = [
    ...more,
    ...records.filter((r) => r.error).map((r) => `${describe(r)}: ${r.error}`),
    ...records
      .filter((r) => r.kind === 'kill' && !r.recoveredAt)
      .map((r) => `${r.target} killed at ${new Date(r.startedAt).toISOString()} never came back`),
    ...(stack.launcherRunning() ? [] : ['the launcher (npm start) stopped during the run']),
    // Without faults the stack serves about one sale a flow; far less means the run tested nothing.
    ...(quietSalesPerS >= rate / 4 ? [] : [`only ${quietSalesPerS} sales/s served in the quiet head, for ${rate} flows/s`]),
  ];
  return { check: 'the run: faults injected, stack served', ok: failures.length === 0, detail: `${records.length} faults`, failures };
}

async function allChecks(
  stack: ChaosStack,
  load: Load,
  listener: ChaosListener,
  merchants: Merchant[],
  dir: string,
  runsDue: RunDue[],
  apiDown: (api: string, from: number, to: number) => boolean,
): Promise<CheckResult[]> {
  return [
    ...(await recordChecks(stack, load.calls, listener.arrivals, merchants, runsDue, apiDown)),
    await cliCheck(stack, 'acquirers agree (acquirer:reconcile)', ['acquirer:reconcile', '--held-grace-s', '30']),
    await cliCheck(stack, 'payables match (ledger:verify)', ['ledger:verify']),
    logsClean(dir, [
      ...merchants.flatMap((m) => [
        { label: 'merchant key', text: m.merchantKey },
        { label: 'webhook secret', text: m.webhookSecret.replace(/^whsec_/, '') },
      ]),
      { label: 'operator token', text: stack.operatorToken },
      ...ACQUIRER_SECRETS.map((text) => ({ label: 'acquirer secret', text })),
      ...stack.keyMaterial().map((text) => ({ label: 'key (TRANSIT_KEYS, VAULT_KEKS, …)', text })),
    ]),
  ];
}

/** After a kill: when the launcher had the replica back and healthy. */
async function replicaBack(stack: ChaosStack, label: string, record: FaultRecord, deadline: number): Promise<void> {
  const url = stack.appUrls.get(label);
  const killed = Number(/pid (\d+)/.exec(record.note ?? '')?.[1]);
  while (url && Date.now() < deadline) {
    const pid = stack.replicas().get(label);
    try {
      if (pid !== undefined && pid !== killed && (await fetch(`${url}/health`, { signal: AbortSignal.timeout(2_000) })).status === 200) {
        record.recoveredAt = Date.now();
        return;
      }
    } catch {
      // not back yet
    }
    await sleep(250);
  }
}

main().then(
  (code) => process.exit(code),
  (e: Error) => {
    say(`chaos run failed to run: ${e.stack ?? e.message}`);
    process.exit(2);
  },
);
