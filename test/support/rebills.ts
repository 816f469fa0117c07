import { Client } from 'pg';

/**
 * Cancels every rebill an earlier suite of the run left active. `rebill:run-due` charges what is
 * due for every merchant, so a suite that moves time would otherwise also catch up the leftovers
 * of the suites before it (slow, and beside the point of its checks). Suites run one at a time.
 */
export async function retireEarlierRebills(databaseUrl = process.env.DATABASE_URL!): Promise<void> {
  const db = new Client({ connectionString: databaseUrl });
  await db.connect();
  try {
    await db.query(
      `UPDATE rebills SET state = 'cancelled', next_due_at = NULL, version = version + 1, updated_at = now() WHERE state = 'active'`,
    );
  } finally {
    await db.end();
  }
}
