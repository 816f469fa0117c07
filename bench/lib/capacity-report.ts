import {
  APPS,
  Assumptions,
  Counters,
  Plan,
  ceilings,
  DEFAULT_ASSUMPTIONS,
  firstToSaturate,
  plan,
  Range,
  ranges,
  RedisFacts,
  SaleCost,
  saleCost,
  scriptCalls,
  sumOf,
} from './capacity-model';

/** What the report needs of a `capacity` run (bench/scenarios/capacity.ts returns more). */
export interface CapacityMeasurement {
  at: string;
  machine?: { cpu?: string; cores?: number; memoryGiB?: number; node?: string };
  versions: { postgres: string; redis: string };
  loadAverage: { before: number[]; after: number[] };
  options: { rounds: number; sales: number; rate: number; mix: Record<string, number> };
  rounds: { perSale: Counters; load: { rps: number; p50: number; p99: number }; drainS: number }[];
  redis: RedisFacts;
  failures: number;
}

export const STEPS = [1_000, 10_000, 50_000];
const PAGE_BYTES = 8192;

/** What to do when one unit of a component is full (the model's ceilings, by name). */
const ACTIONS: Record<string, (p: Plan) => string> = {
  'api replica': (p) => `run ${p.replicas.api} api replicas behind the load balancer (stateless)`,
  'tokenizer replica': (p) => `run ${p.replicas.tokenizer} tokenizer replicas (workers on the same queues)`,
  'settlement replica': (p) => `run ${p.replicas.settlement} settlement replicas`,
  'notifier replica': (p) => `run ${p.replicas.notifier} notifier replicas`,
  'Redis shard (main thread)': (p) =>
    `Redis Cluster with ${p.redis.masters} masters, which helps only as far as the load is spread over queues: a BullMQ queue is one hash slot, so the busiest queue must be split (several queues per pattern) once it alone fills a shard`,
  'Postgres primary (CPU)': (p) =>
    `${p.postgres.primaries} primaries: shard by merchant (every hot table carries merchant_id), move the notifier's deliveries and attempts to a database of their own, the console's reads to replicas`,
  'Postgres primary (WAL)': (p) =>
    `${p.postgres.walMBps.toFixed(0)} MB/s of WAL is past one primary and its replicas' replay: first \`wal_compression\` (full-page images are much of it), then move the deliveries' writes off the primary and shard by merchant`,
};
export const BEGIN = '<!-- capacity:generated:begin (bench/lib/capacity-report.ts writes this part) -->';
export const END = '<!-- capacity:generated:end -->';

const num = (n: number, digits = 0) =>
  Number.isFinite(n) ? n.toLocaleString('en-US', { minimumFractionDigits: digits, maximumFractionDigits: digits }) : '∞';
/** "a–b", or "a" when both ends print the same. */
const span = (r: Range | undefined, digits = 0, scale = 1) => {
  if (!r) return '0';
  const [lo, hi] = [num(r.min * scale, digits), num(r.max * scale, digits)];
  return lo === hi ? lo : `${lo}–${hi}`;
};
/** Digits enough to show a small per-sale figure. */
const digitsFor = (r: Range, scale = 1) => (r.max * scale >= 100 ? 0 : r.max * scale >= 1 ? 2 : 3);

function table(head: string[], rows: string[][]): string[] {
  return [`| ${head.join(' | ')} |`, `|${head.map(() => '---').join('|')}|`, ...rows.map((r) => `| ${r.join(' | ')} |`)];
}

/** The keys under a prefix, largest (by max over the rounds) first, at most `limit`. */
function top(r: Record<string, Range>, prefix: string, limit: number): [string, Range][] {
  return Object.entries(r)
    .filter(([k, v]) => k.startsWith(prefix) && v.max > 0)
    .sort(([, a], [, b]) => b.max - a.max)
    .slice(0, limit)
    .map(([k, v]) => [k.slice(prefix.length), v]);
}

/** Every run's Redis facts at their largest (the plan errs on the safe side). */
function redisOf(runs: CapacityMeasurement[]): RedisFacts {
  const most = (f: (r: RedisFacts) => number) => Math.max(...runs.map((m) => f(m.redis)));
  return {
    bytesPerQueuedJob: most((r) => r.bytesPerQueuedJob),
    jobsPerSale: most((r) => r.jobsPerSale),
    queues: most((r) => r.queues),
    queuesKeepingCompleted: most((r) => r.queuesKeepingCompleted),
    idleBytes: most((r) => r.idleBytes),
  };
}

/**
 * The generated part of docs/capacity.md (and bench/results/capacity.md): measurement, then model,
 * over the rounds of one or more runs of the same load.
 */
export function renderCapacity(runs: CapacityMeasurement[], a: Assumptions = DEFAULT_ASSUMPTIONS): string {
  if (!runs.length) throw new Error('no capacity measurement');
  const [m] = runs;
  const load = (x: CapacityMeasurement) => JSON.stringify([x.options.sales, x.options.rate, x.options.mix]);
  if (runs.some((x) => load(x) !== load(m))) throw new Error('the runs did not measure the same load (sales, rate, mix): not one range');
  const rounds = runs.flatMap((x) => x.rounds);
  const per = rounds.map((r) => r.perSale);
  const r = ranges(per);
  const cost = saleCost(per);
  const redis = redisOf(runs);
  return [
    BEGIN,
    '',
    ...measuredSection(runs, rounds.length),
    '',
    ...costSection(per, r, rounds.length),
    '',
    ...trafficSection(runs, r, redis),
    '',
    ...modelSection(cost, a),
    '',
    ...stepsSection(cost, redis, a),
    '',
    END,
  ].join('\n');
}

/** What was measured, on what, and how each run went. */
function measuredSection(runs: CapacityMeasurement[], roundCount: number): string[] {
  const [m] = runs;
  const failures = runs.reduce((n, x) => n + x.failures, 0);
  const mix = Object.entries(m.options.mix)
    .filter(([, w]) => w > 0)
    .map(([k, w]) => `${k} ${w}`)
    .join(' : ');
  return [
    `Measured by \`BENCH_ONLY=capacity\` in ${runs.length} run${runs.length > 1 ? 's' : ''}, ${roundCount} rounds in all, each of ${num(m.options.sales)} sales asked at ${num(m.options.rate)}/s ` +
      `(mix card : token : split = ${mix}; every sale approved, with a webhook to a listener answering at once), on ${m.machine?.cores ?? '?'} cores ` +
      `(${m.machine?.cpu ?? '?'}), ${m.machine?.memoryGiB ?? '?'} GiB, Node ${m.machine?.node ?? '?'}, Postgres ${m.versions.postgres}, Redis ${m.versions.redis}; ` +
      `load generator, apps, Postgres and Redis on the same machine.` +
      (failures ? ` **${failures} sales failed.**` : ''),
    '',
    ...runs.map(runLine),
  ];
}

const la = (l: number[]) => l.map((x) => x.toFixed(2)).join(' / ');

/** One run's line: its machine's load, the rate its rounds reached, and whatever made it less than clean. */
function runLine(x: CapacityMeasurement, i: number): string {
  return (
    `- Run ${i + 1}, ${x.at.slice(0, 16).replace('T', ' ')} UTC: load average (1/5/15 min) ${la(x.loadAverage.before)} before, ${la(x.loadAverage.after)} after; ` +
    `sales went at ${x.rounds.map((y) => num(y.load.rps)).join(' / ')} per second in its rounds, p99 ${x.rounds.map((y) => num(y.load.p99)).join(' / ')} ms` +
    (x.rounds.some((y) => y.load.rps < 0.95 * x.options.rate)
      ? ` (**under the ${num(x.options.rate)}/s asked: the machine did not keep up**)`
      : '') +
    `; pipeline done ${x.rounds.map((y) => y.drainS.toFixed(1)).join(' / ')} s after each round's load` +
    (Math.max(...x.loadAverage.before, ...x.loadAverage.after) > (x.machine?.cores ?? Infinity)
      ? '; **contended: the load average was above the number of cores, so other work shared the CPU**'
      : '') +
    (x.failures ? `; **${x.failures} sales failed**` : '') +
    '.'
  );
}

/** The cost of one sale, counter by counter (ranges over the rounds). */
function costSection(per: Counters[], r: Record<string, Range>, roundCount: number): string[] {
  const derived = ranges(
    per.map((c) => ({
      redisCommands: sumOf(c, 'redis.cmd.'),
      pgStatements: sumOf(c, 'pg.stmt.'),
      rows: sumOf(c, 'pg.rows.'),
      walLessFpi: Math.max(0, (c['pg.wal-bytes'] ?? 0) - (c['pg.wal-fpi'] ?? 0) * PAGE_BYTES),
      scriptCalls: scriptCalls(c),
    })),
  );
  return [
    '### Cost of one sale',
    '',
    `Ranges are min–max over the ${roundCount} rounds, idle cost taken off; the model uses the max.`,
    '',
    ...table(
      ['per sale', 'measured'],
      [
        ...APPS.map((app) => {
          const x = r[`cpu.${app}`];
          return [`CPU ms, ${app}`, span(x, digitsFor(x, 1000), 1000)];
        }),
        ['CPU ms, Redis (all threads)', span(r['cpu.redis'], digitsFor(r['cpu.redis'], 1000), 1000)],
        ['CPU ms, Redis main thread', span(r['cpu.redis-main'], digitsFor(r['cpu.redis-main'], 1000), 1000)],
        ['CPU ms, Postgres (all processes)', span(r['cpu.postgres'], digitsFor(r['cpu.postgres'], 1000), 1000)],
        ['Redis commands executed (those inside scripts too)', span(derived.redisCommands, 1)],
        ['of which script calls (EVALSHA: BullMQ moving a job)', span(derived.scriptCalls, 1)],
        ['Postgres statements (the apps\u2019, BEGIN/COMMIT included)', span(derived.pgStatements, 1)],
        ['Postgres transactions committed', span(r['pg.commits'], 1)],
        ['Postgres statement execution, ms', span(r['pg.exec-ms'], 2)],
        ['WAL bytes', span(r['pg.wal-bytes'])],
        ['WAL records', span(r['pg.wal-records'], 1)],
        ['full-page images in WAL (first change of a page after a checkpoint)', span(r['pg.wal-fpi'], 2)],
        ['WAL bytes less the full-page images (at most 8 KiB each: a floor)', span(derived.walLessFpi)],
        ['WAL syncs (fsync)', span(r['pg.wal-syncs'], 2)],
        ['data pages written (8 KiB; checkpoint after each round)', span(r['pg.pages-written'], 2)],
        ['rows inserted, updated or deleted', span(derived.rows, 1)],
      ],
    ),
  ];
}

/** Redis memory, then the commands, statements and tables that make a sale's traffic. */
function trafficSection(runs: CapacityMeasurement[], r: Record<string, Range>, redis: RedisFacts): string[] {
  const queued = ranges(runs.map((x) => ({ b: x.redis.bytesPerQueuedJob })));
  return [
    `Redis memory: ${span(queued.b)} bytes per queued event job (the event queues paused, ${num(redis.jobsPerSale, 2)} jobs per sale), ` +
      `${num(redis.idleBytes / 1e6, 1)} MB used by the idle stack, ${redis.queues} queues of which ${redis.queuesKeepingCompleted} keep completed jobs.`,
    '',
    ...table(
      ['Redis command', 'per sale'],
      top(r, 'redis.cmd.', 12).map(([k, v]) => [k, span(v, 2)]),
    ),
    '',
    ...table(
      ['Postgres statement', 'per sale'],
      top(r, 'pg.stmt.', 15).map(([k, v]) => [k, span(v, 2)]),
    ),
    '',
    ...table(
      ['table', 'rows written per sale'],
      top(r, 'pg.rows.', 15).map(([k, v]) => [k, span(v, 2)]),
    ),
  ];
}

/** The model's assumptions, each app's cores, and where one unit of each component is full. */
function modelSection(cost: SaleCost, a: Assumptions): string[] {
  return [
    '### The model',
    '',
    `Assumptions (chosen, not measured): a Node replica runs at most ${a.appUtilisation * 100} % of one core, a Redis shard's main thread ${a.redisUtilisation * 100} %, ` +
      `the Postgres primary's cores ${a.postgresUtilisation * 100} %; at least ${a.minReplicas} replicas of each app; the largest primary is ${a.primaryMaxCores} cores ` +
      `and sustains ${a.walMaxMBps} MB/s of WAL (its streaming replicas replay it single-threaded); a server connection is busy executing 1 in ${a.connectionsPerBusy} ` +
      `of the time it is held; Redis holds a ${a.backlogS} s backlog of event jobs (a consumer stalled) plus ${num(a.keptCompletedPerQueue)} completed jobs per queue that keeps them, ` +
      `each as big as a queued one. IOPS: WAL syncs plus data pages written, at the measured rate of each (group commit and longer checkpoints lower both at higher rates).`,
    '',
    ...table(
      ['app', 'CPU ms per sale', 'cores per 1 000 sales/s', `with headroom (÷ ${a.appUtilisation})`],
      APPS.map((app) => [app, num(cost.appCpuMs[app], 2), num(cost.appCpuMs[app], 2), num(cost.appCpuMs[app] / a.appUtilisation, 2)]),
    ),
    '',
    ...table(
      ['one unit of', 'full at sales/s'],
      firstToSaturate(cost, a).map((c) => [c.name, num(c.rate)]),
    ),
  ];
}

/** The plan at each step of STEPS, and what to do past each unit that is full there. */
function stepsSection(cost: SaleCost, redis: RedisFacts, a: Assumptions): string[] {
  const plans = STEPS.map((rate) => plan(rate, cost, redis, a));
  const c = ceilings(cost, a);
  return [
    ...table(
      ['at sales/s', ...STEPS.map((s) => num(s))],
      [
        ...APPS.map((app) => [`${app} replicas (cores)`, ...plans.map((p) => `${p.replicas[app]} (${num(p.appCores[app], 1)})`)]),
        ['Redis commands/s (of which script calls)', ...plans.map((p) => `${num(p.redis.commandsPerS)} (${num(p.redis.scriptCallsPerS)})`)],
        ['Redis main-thread cores → masters', ...plans.map((p) => `${num(p.redis.mainThreadCores, 2)} → ${p.redis.masters}`)],
        ['Redis memory, MB', ...plans.map((p) => num(p.redis.memoryMB))],
        ['Postgres statements/s', ...plans.map((p) => num(p.postgres.statementsPerS))],
        ['Postgres commits/s', ...plans.map((p) => num(p.postgres.commitsPerS))],
        ['Postgres cores', ...plans.map((p) => num(p.postgres.cores, 1))],
        ['WAL MB/s', ...plans.map((p) => num(p.postgres.walMBps, 1))],
        ['IOPS (WAL syncs + page writes)', ...plans.map((p) => num(p.postgres.iops))],
        ['rows written/s', ...plans.map((p) => num(p.postgres.rowsPerS))],
        ['server connections through PgBouncer', ...plans.map((p) => num(p.postgres.serverConnections))],
        ['client connections into PgBouncer (replicas × DB_POOL_SIZE)', ...plans.map((p) => num(p.postgres.clientConnections))],
        ['Postgres primaries needed', ...plans.map((p) => num(p.postgres.primaries))],
      ],
    ),
    '',
    'At each step, every single unit past full, first to saturate first, and what to do:',
    '',
    ...plans.flatMap((p) => [
      `- **${num(p.rate)} sales/s**: ` +
        (p.saturated.length
          ? p.saturated.map((name) => `${name} (one is full at ${num(c[name])}/s) → ${ACTIONS[name](p)}`).join('; ')
          : 'nothing: one of each unit is enough (the minimum of replicas still applies)') +
        '.',
    ]),
  ];
}

/** `doc` with the part between the markers replaced by `generated` (which carries the markers). */
export function spliceGenerated(doc: string, generated: string): string {
  const from = doc.indexOf(BEGIN);
  const to = doc.indexOf(END);
  if (from < 0 || to < from) throw new Error('docs/capacity.md has no generated part (its markers are missing)');
  return doc.slice(0, from) + generated + doc.slice(to + END.length);
}
