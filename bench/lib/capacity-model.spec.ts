import {
  Assumptions,
  Counters,
  DEFAULT_ASSUMPTIONS,
  firstToSaturate,
  perSale,
  plan,
  ranges,
  RedisFacts,
  saleCost,
  statementLabel,
} from './capacity-model';
import { BEGIN, CapacityMeasurement, END, renderCapacity, spliceGenerated } from './capacity-report';

/** A sale costing: api 2 ms, tokenizer 1, settlement 0.5, notifier 1.5; Redis main 1 ms; Postgres 3 ms; 10 kB WAL. */
const sale: Counters = {
  'cpu.api': 0.002,
  'cpu.tokenizer': 0.001,
  'cpu.settlement': 0.0005,
  'cpu.notifier': 0.0015,
  'cpu.redis': 0.0011,
  'cpu.redis-main': 0.001,
  'cpu.postgres': 0.003,
  'redis.cmd.evalsha': 10,
  'redis.cmd.hget': 30,
  'pg.stmt.UPDATE transactions + INSERT INTO outbox': 0.5,
  'pg.stmt.SELECT merchants': 0.25,
  'pg.commits': 2,
  'pg.exec-ms': 4,
  'pg.wal-bytes': 10_000,
  'pg.wal-syncs': 1,
  'pg.wal-fpi': 1,
  'pg.pages-written': 4,
  'pg.rows.public.outbox': 4,
  'pg.rows.public.transactions': 2,
};
const redis: RedisFacts = { bytesPerQueuedJob: 2000, jobsPerSale: 2, queues: 10, queuesKeepingCompleted: 3, idleBytes: 5e6 };

describe('perSale', () => {
  it('takes off what the stack spends idle over as long, then divides by the sales', () => {
    // 100 s of round, 1000 sales; idle: 10 s costing 0.5 s of CPU → 5 s over the round.
    const c = perSale({
      sales: 1000,
      elapsedS: 100,
      counted: { 'cpu.api': 7, 'pg.commits': 2100 },
      idleS: 10,
      idle: { 'cpu.api': 0.5, 'pg.commits': 10 },
    });
    expect(c['cpu.api']).toBeCloseTo(0.002, 10);
    expect(c['pg.commits']).toBeCloseTo(2, 10);
  });

  it('never goes below zero, and counts a key seen only idle as nothing', () => {
    const c = perSale({ sales: 10, elapsedS: 10, counted: { a: 1 }, idleS: 10, idle: { a: 5, b: 3 } });
    expect(c).toEqual({ a: 0, b: 0 });
  });

  it('without an idle window takes nothing off', () => {
    expect(perSale({ sales: 4, elapsedS: 10, counted: { a: 8 }, idleS: 0, idle: {} })).toEqual({ a: 2 });
  });

  it('refuses a round without sales', () => {
    expect(() => perSale({ sales: 0, elapsedS: 1, counted: {}, idleS: 1, idle: {} })).toThrow(/without sales/);
  });
});

describe('ranges and saleCost', () => {
  it('gives min, max and mean per key, a missing key counting as 0', () => {
    expect(ranges([{ a: 1, b: 4 }, { a: 3 }])).toEqual({ a: { min: 1, max: 3, mean: 2 }, b: { min: 0, max: 4, mean: 2 } });
  });

  it('takes the worst round of each figure, in ms and summed by kind', () => {
    const cost = saleCost([sale, { ...sale, 'cpu.api': 0.003, 'redis.cmd.hget': 20 }]);
    expect(cost.appCpuMs.api).toBeCloseTo(3, 10);
    expect(cost.appCpuMs.notifier).toBeCloseTo(1.5, 10);
    expect(cost.redisCommands).toBe(40);
    expect(cost.redisScriptCalls).toBe(10);
    expect(cost.pgStatements).toBe(0.75);
    expect(cost.rowsWritten).toBe(6);
    expect(cost.postgresCpuMs).toBeCloseTo(3, 10);
  });
});

describe('plan', () => {
  const cost = saleCost([sale]);

  it('sizes each app by its CPU at the planned utilisation, at least the minimum of replicas', () => {
    const p = plan(1000, cost, redis);
    // api: 1000/s × 2 ms = 2 cores busy, at 60 % → 3.33 cores → 4 replicas.
    expect(p.appCores.api).toBeCloseTo(3.333, 3);
    expect(p.replicas).toEqual({ api: 4, tokenizer: 2, settlement: 2, notifier: 3 });
    expect(plan(10, cost, redis).replicas.api).toBe(DEFAULT_ASSUMPTIONS.minReplicas);
  });

  it('sizes Redis by its main thread and memory by backlog and kept jobs', () => {
    const p = plan(1000, cost, redis);
    // 1 ms × 1000/s = 1 core of main thread at 50 % → 2 masters.
    expect(p.redis.mainThreadCores).toBeCloseTo(2, 10);
    expect(p.redis.masters).toBe(2);
    expect(p.redis.commandsPerS).toBe(40_000);
    expect(p.redis.scriptCallsPerS).toBe(10_000);
    // 5 MB idle + 2000 B × (2 jobs × 1000/s × 300 s + 3 queues × 10 000 kept) = 5 + 1260 MB.
    expect(p.redis.memoryMB).toBeCloseTo(1265, 6);
  });

  it('sizes Postgres: cores, WAL, IOPS, connections, and more primaries past the largest one', () => {
    const p = plan(10_000, cost, redis);
    expect(p.postgres.cores).toBeCloseTo(50, 10); // 3 ms × 10 000/s = 30 cores at 60 %
    expect(p.postgres.walMBps).toBeCloseTo(100, 10);
    expect(p.postgres.iops).toBe(50_000);
    expect(p.postgres.commitsPerS).toBe(20_000);
    expect(p.postgres.statementsPerS).toBe(7_500);
    // 4 ms of execution × 10 000/s = 40 busy connections, × 3 held per busy.
    expect(p.postgres.serverConnections).toBe(120);
    expect(p.postgres.primaries).toBe(1);
    const big = plan(50_000, cost, redis);
    // 250 cores needed / 64 → 4; 500 MB/s of WAL / 150 → 4.
    expect(big.postgres.primaries).toBe(4);
    expect(big.postgres.clientConnections).toBe(
      big.replicas.api * 10 + big.replicas.tokenizer * 16 + big.replicas.settlement * 5 + big.replicas.notifier * 20,
    );
  });

  it('lists the single units a rate overflows, the one that fills first first', () => {
    const order = firstToSaturate(cost).map((c) => c.name);
    // api 0.6 × 1000 / 2 ms = 300/s, notifier 400/s, a Redis shard 0.5 × 1000 / 1 ms = 500/s, …,
    // the primary's 64 cores 12 800/s, its WAL 150 MB/s / 10 kB = 15 000/s.
    expect(order).toEqual([
      'api replica',
      'notifier replica',
      'Redis shard (main thread)',
      'tokenizer replica',
      'settlement replica',
      'Postgres primary (CPU)',
      'Postgres primary (WAL)',
    ]);
    expect(firstToSaturate(cost).map((c) => Math.round(c.rate))).toEqual([300, 400, 500, 600, 1200, 12_800, 15_000]);
    expect(plan(250, cost, redis).saturated).toEqual([]);
    expect(plan(450, cost, redis).saturated).toEqual(['api replica', 'notifier replica']);
    expect(plan(14_000, cost, redis).saturated.slice(-1)).toEqual(['Postgres primary (CPU)']);
  });

  it('takes other assumptions', () => {
    const a: Assumptions = { ...DEFAULT_ASSUMPTIONS, redisUtilisation: 1 };
    expect(plan(1000, cost, redis, a).redis.masters).toBe(1);
  });
});

describe('statementLabel', () => {
  it('names the tables a statement writes, in order, else the one it reads', () => {
    expect(
      statementLabel(`WITH updated AS (UPDATE transactions t SET status = k.status FROM unnest($1::uuid[]) AS k (id) WHERE t.id = k.id RETURNING t.id)
        INSERT INTO outbox (id, event) SELECT e.id, e.event FROM updated JOIN unnest($11::uuid[]) AS e (id)`),
    ).toBe('UPDATE transactions + INSERT INTO outbox');
    expect(statementLabel('INSERT INTO listeners (a) VALUES ($1) ON CONFLICT (a) DO UPDATE SET b = $2')).toBe('INSERT INTO listeners');
    expect(statementLabel('SELECT t.id FROM transactions t JOIN unnest($1::uuid[]) AS k (id) ON t.id = k.id')).toBe('SELECT transactions');
    expect(statementLabel('SELECT * FROM unnest($1::uuid[]) u JOIN vault.token_cards c ON c.token = u')).toBe('SELECT vault.token_cards');
    expect(statementLabel('SELECT id FROM outbox WHERE published_at IS NULL LIMIT 100 FOR UPDATE SKIP LOCKED')).toBe('SELECT outbox');
    expect(statementLabel('COMMIT')).toBe('COMMIT');
  });
});

describe('the report', () => {
  const measurement: CapacityMeasurement = {
    at: '2026-11-25T22:00:00.000Z',
    machine: { cpu: 'test cpu', cores: 2, memoryGiB: 8, node: 'v20' },
    versions: { postgres: '15', redis: '7' },
    loadAverage: { before: [1, 1, 1], after: [2, 2, 2] },
    options: { rounds: 2, sales: 1000, rate: 200, mix: { card: 3, token: 1, split: 0 } },
    rounds: [
      { perSale: sale, load: { rps: 200, p50: 5, p99: 20 }, drainS: 1 },
      { perSale: { ...sale, 'cpu.api': 0.003 }, load: { rps: 150, p50: 6, p99: 30 }, drainS: 2 },
    ],
    redis,
    failures: 0,
  };

  it('prints the measured ranges and the model from them', () => {
    const md = renderCapacity([measurement]);
    expect(md.startsWith(BEGIN) && md.endsWith(END)).toBe(true);
    expect(md).toContain('| CPU ms, api | 2.00–3.00 |');
    expect(md).toContain('mix card : token : split = card 3 : token 1;');
    expect(md).toContain('| WAL bytes less the full-page images (at most 8 KiB each: a floor) | 1,808 |');
    expect(md).toContain('went at 200 / 150 per second in its rounds, p99 20 / 30 ms (**under the 200/s asked');
    // api at 3 ms (the worst round): 1000/s → 5 replicas, 10 000/s → 50, 50 000/s → 250.
    expect(md).toContain('| api replicas (cores) | 5 (5.0) | 50 (50.0) | 250 (250.0) |');
    // One api replica is full at 0.6 × 1000 / 3 ms = 200/s, the first unit to fill.
    expect(md).toMatch(/- \*\*1,000 sales\/s\*\*: api replica \(one is full at 200\/s\) → run 5 api replicas/);
  });

  it('puts the rounds of several runs of the same load into one range, and refuses different loads', () => {
    const second = { ...measurement, rounds: [{ ...measurement.rounds[0], perSale: { ...sale, 'cpu.api': 0.004 } }] };
    const md = renderCapacity([measurement, second]);
    expect(md).toContain('in 2 runs, 3 rounds in all');
    expect(md).toContain('| CPU ms, api | 2.00–4.00 |');
    expect(md).toContain('- Run 2, 2026-11-25 22:00 UTC');
    expect(md).not.toContain('contended');
    const busy = renderCapacity([{ ...measurement, loadAverage: { before: [1, 1, 1], after: [3, 2, 2] } }]);
    expect(busy).toContain('**contended: the load average was above the number of cores');
    expect(() => renderCapacity([measurement, { ...measurement, options: { ...measurement.options, rate: 100 } }])).toThrow(/same load/);
  });

  it('replaces only the generated part of the document', () => {
    const doc = `# Capacity\n\nprose\n\n${BEGIN}\nold\n${END}\n\nmore prose\n`;
    expect(spliceGenerated(doc, `${BEGIN}\nnew\n${END}`)).toBe(`# Capacity\n\nprose\n\n${BEGIN}\nnew\n${END}\n\nmore prose\n`);
    expect(() => spliceGenerated('# no markers', 'x')).toThrow(/markers/);
  });
});
