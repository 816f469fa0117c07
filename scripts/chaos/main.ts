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
import { mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { repoRoot, sleep } from '../lib/processes';
import { CheckResult, cliCheck, logsClean, outstanding, recordChecks } from './checks';
import { describe, FaultRecord, inject, planFaults, PlannedFault } from './faults';
import { ChaosListener } from './listener';
import { CHAOS_SECURITY_CODE, chaosCard, EREDE_DECLINED_CARD, Load } from './load';
import { Random } from './random';
import { ACQUIRER_SECRETS, ChaosStack, Merchant } from './stack';
import { loadFigures, printTable, recovery } from './report';

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
  const dir = join(tmpdir(), `gateway-chaos-${new Date().toISOString().replace(/[:.]/g, '').slice(0, 15)}-${o.seed}`);
  mkdirSync(dir, { recursive: true });
  announce(o, b.env, plan, quietS, dir);

  const stack = await ChaosStack.start(root, dir, b.env, say);
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
    listener = await ChaosListener.start({ seed: o.seed, failShare: 0.1, slowShare: 0.05, slowMs: 1_500 });
    const l = listener;
    const load = new Load(random, stack.apiUrls, merchants, (m) => l.urlFor(m.merchantId, m.webhookSecret), `C${o.seed.toString(36)}`);
    const { start, records } = await loadUnderFaults(stack, load, plan, o);

    const all = Object.values(merchants);
    const drained = await drain(stack, l, all, b.drainS);
    const checks = await allChecks(stack, load, l, all, dir);
    const figures = loadFigures(load.calls, records, start, quietS, o.durationS);
    printTable(checks, records, start, load.calls, figures, drained);
    failed = checks.some((c) => !c.ok);
    const report = {
      seed: o.seed,
      durationS: o.durationS,
      rate: o.rate,
      budgets: b.env,
      outageS,
      startedAt: new Date(start).toISOString(),
      ok: !failed,
      checks,
      faults: records.map((r) => ({ ...r, at: new Date(r.startedAt).toISOString(), recoveredAfterS: recovery(r, load.calls) })),
      figures,
      drainedAfterS: drained,
      loadavg: loadavg(),
      files: dir,
    };
    writeFileSync(resolve(o.report), JSON.stringify(report, null, 2) + '\n');
    say(`report: ${resolve(o.report)}`);
    if (o.record)
      recordFigures(root, start, { seed: o.seed, durationS: o.durationS, rate: o.rate, ok: !failed, figures, loadavg: report.loadavg });
  } finally {
    await listener?.close();
    await stack.stop().catch((e: Error) => say(`stopping the stack: ${e.message}`));
    if (!failed && !o.keep) rmSync(dir, { recursive: true, force: true });
    else say(`the run's logs and servers' files are kept in ${dir}`);
  }
  return failed ? 1 : 0;
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
 * resolves once every fault is over and every flow has ended.
 */
async function loadUnderFaults(
  stack: ChaosStack,
  load: Load,
  plan: PlannedFault[],
  o: Options,
): Promise<{ start: number; records: FaultRecord[] }> {
  // Let every merchant's cached credentials and limits settle before the clock starts.
  await sleep(1_500);
  const start = Date.now();
  const at = () => `  ${((Date.now() - start) / 1000).toFixed(0).padStart(5)} s`;
  const records: FaultRecord[] = [];
  const faults = plan.map(async (f) => {
    await sleep(start + f.atS * 1000 - Date.now());
    const record: FaultRecord = { ...f, startedAt: Date.now() };
    records.push(record);
    say(`${at()}  ${describe(f)}`);
    await inject(stack, f, record, say);
    if (f.kind === 'kill') await replicaBack(stack, f.target!, record);
  });
  const due = [0.4, 0.8].map(async (share, k) => {
    await sleep(start + share * o.durationS * 1000 - Date.now());
    const asOf = new Date(Date.now() + (k + 1) * 86_400_000 + 60_000).toISOString();
    const r = await stack.cliRaw<{ opened?: number }>(['rebill:run-due', '--as-of', asOf, '--timeout-s', '60']);
    say(`${at()}  rebill:run-due --as-of ${asOf}: exit ${r.code}, ${r.json?.opened ?? 0} charges opened`);
  });
  await load.drive(o.rate, start + o.durationS * 1000);
  const skipped = load.skipped ? `, ${load.skipped} flows not started (too many in flight)` : '';
  say(`load over: ${load.calls.length} requests${skipped}; waiting for the faults and flows in flight`);
  await Promise.all([...faults, ...due, load.settle()]);
  return { start, records };
}

async function allChecks(
  stack: ChaosStack,
  load: Load,
  listener: ChaosListener,
  merchants: Merchant[],
  dir: string,
): Promise<CheckResult[]> {
  return [
    ...(await recordChecks(stack, load.calls, listener.arrivals, merchants)),
    await cliCheck(stack, 'acquirers agree (acquirer:reconcile)', ['acquirer:reconcile', '--held-grace-s', '30']),
    await cliCheck(stack, 'payables match (ledger:verify)', ['ledger:verify']),
    logsClean(
      [dir],
      [
        ...Array.from({ length: 10 }, (_, d) => ({ label: 'card number', text: chaosCard(d) })),
        { label: 'card number', text: EREDE_DECLINED_CARD },
        { label: 'security code', text: CHAOS_SECURITY_CODE },
        ...merchants.flatMap((m) => [
          { label: 'merchant key', text: m.merchantKey },
          { label: 'webhook secret', text: m.webhookSecret.replace(/^whsec_/, '') },
        ]),
        { label: 'operator token', text: stack.operatorToken },
        ...ACQUIRER_SECRETS.map((text) => ({ label: 'acquirer secret', text })),
      ],
    ),
  ];
}

/** bench/results/chaos/<time>-seed<seed>.json: the load figures beside the bench's. */
function recordFigures(root: string, start: number, figures: Record<string, unknown>): void {
  const out = join(root, 'bench', 'results', 'chaos');
  mkdirSync(out, { recursive: true });
  const file = join(out, `${new Date(start).toISOString().slice(0, 16).replace(/:/g, '')}Z-seed${String(figures.seed)}.json`);
  writeFileSync(file, JSON.stringify(figures, null, 2) + '\n');
  say(`load figures: ${file}`);
}

/** After a kill: when the launcher had the replica back and healthy. */
async function replicaBack(stack: ChaosStack, label: string, record: FaultRecord): Promise<void> {
  const url = stack.appUrls.get(label);
  const deadline = Date.now() + 180_000;
  while (url && Date.now() < deadline) {
    try {
      if ((await fetch(`${url}/health`, { signal: AbortSignal.timeout(2_000) })).status === 200 && stack.replicas().has(label)) {
        record.endedAt = Date.now();
        return;
      }
    } catch {
      // not back yet
    }
    await sleep(250);
  }
  record.note = `${record.note ?? ''}; not healthy again within 180 s`;
}

/** Waits until nothing is undecided and every announced change was acknowledged (or the time is up); how long that took. */
async function drain(stack: ChaosStack, listener: ChaosListener, merchants: Merchant[], maxS: number): Promise<number | undefined> {
  const started = Date.now();
  let last = '';
  while (Date.now() - started < maxS * 1000) {
    try {
      const o = await outstanding(stack, listener.arrivals, merchants);
      // Settlement's sweep may still be repairing what ran out of retries: payables last.
      const ledger =
        o.undecided === 0 && o.unacknowledged === 0 ? (await cliCheck(stack, 'ledger', ['ledger:verify'])).failures.length : undefined;
      const line = `${o.undecided} undecided, ${o.unacknowledged} status changes not acknowledged yet${ledger ? `, ${ledger} payables differences` : ''}`;
      if (ledger === 0) {
        say(`drained after ${((Date.now() - started) / 1000).toFixed(0)} s`);
        return (Date.now() - started) / 1000;
      }
      if (line !== last) say(`  draining: ${line}`);
      last = line;
    } catch (e) {
      say(`  draining: ${(e as Error).message}`);
    }
    await sleep(2_000);
  }
  say(`not drained within ${maxS} s: the checks below name what is left`);
  return undefined;
}

main().then(
  (code) => process.exit(code),
  (e: Error) => {
    say(`chaos run failed to run: ${e.stack ?? e.message}`);
    process.exit(2);
  },
);
