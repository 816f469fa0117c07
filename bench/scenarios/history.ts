import { Client } from 'pg';
import { LoadShape } from '../lib/load';
import { Scenario } from '../lib/scenario';
import { BenchStack, HISTORY_MERCHANT, seedSales } from '../lib/stack';
import { saleScenarios } from './sales';
import { splitSaleScenarios } from './split-sales';

/** The sale scenarios, named for the history they run on (no targets: the figure is their ratio). */
export function historyScenarios(closed: LoadShape, fixed: LoadShape, label: string): Scenario[] {
  return [...saleScenarios(closed, fixed), ...splitSaleScenarios(closed)].map((s) => ({
    ...s,
    name: `${s.name} @ ${label}`,
    target: undefined,
    extraTarget: undefined,
  }));
}

/**
 * The reads of the sale path and of its background passes that a long history could slow (each
 * must stay an index read of what it needs), and the retention passes' own: EXPLAINed on the long
 * history, their scan and join nodes and time go to the report.
 */
const HOT_READS: [string, string][] = [
  [
    'report by reference',
    `SELECT id FROM transactions WHERE merchant_id = '${HISTORY_MERCHANT}' AND reference = 'H-5000000' ORDER BY created_at DESC, id DESC LIMIT 1`,
  ],
  [
    'pending sales pass',
    `SELECT id FROM transactions WHERE status = 0 AND created_at < now() - interval '30 seconds' ORDER BY created_at LIMIT 100`,
  ],
  [
    'operation claims pass',
    `SELECT id FROM transaction_operations WHERE state = 'pending' AND created_at < now() - interval '30 seconds' ORDER BY created_at LIMIT 100`,
  ],
  ['outbox relay', `SELECT id FROM outbox WHERE published_at IS NULL ORDER BY created_at, id LIMIT 100`],
  ['sandbox repeat lookup', `SELECT result FROM sandbox_calls WHERE operation_key = 'sale-none' AND NOT repeat`],
  ['retention: outbox', `SELECT id FROM outbox WHERE published_at < now() - interval '7 days' ORDER BY published_at LIMIT 1000`],
  [
    'retention: sandbox calls',
    `SELECT id FROM sandbox_calls WHERE created_at < now() - interval '90 days' AND NOT EXISTS (SELECT 1 FROM sandbox_calls later WHERE later.tid = sandbox_calls.tid AND later.created_at >= now() - interval '90 days') ORDER BY created_at LIMIT 1000`,
  ],
];

/**
 * Adds `sales` settled sales of history (a year of them, spread evenly, as the retention rules
 * leave them: see seedSales), then VACUUM ANALYZE, as a database in service is. Returns the time
 * it took and the database's size after, for the report.
 */
export async function addHistory(stack: BenchStack, sales: number): Promise<{ seconds: number; databaseSize: string; plans: string[] }> {
  const db = new Client({ connectionString: stack.env.DATABASE_URL });
  await db.connect();
  const started = Date.now();
  try {
    const spacingS = (365 * 86_400) / sales;
    await seedSales(db, sales, spacingS, (done) =>
      process.stdout.write(`history: ${done.toLocaleString('en-US')} of ${sales.toLocaleString('en-US')} sales written\n`),
    );
    await db.query('VACUUM ANALYZE');
    const [{ size }] = (await db.query<{ size: string }>('SELECT pg_size_pretty(pg_database_size(current_database())) AS size')).rows;
    const seconds = (Date.now() - started) / 1000;
    const plans: string[] = [];
    for (const [name, sql] of HOT_READS) {
      const plan = (await db.query<{ 'QUERY PLAN': string }>(`EXPLAIN (ANALYZE, BUFFERS, TIMING OFF) ${sql}`)).rows.map(
        (r) => r['QUERY PLAN'],
      );
      const nodes = plan
        .filter((l) => /Scan|Sort|Join|Nested Loop/.test(l))
        .map((l) => l.replace(/->|\(cost=[^)]*\)|\(actual[^)]*\)/g, '').trim());
      plans.push(`${name}: ${nodes.join(' < ')} | ${plan.find((l) => l.startsWith('Execution Time')) ?? ''}`);
    }
    return { seconds, databaseSize: size, plans };
  } finally {
    await db.end();
  }
}
