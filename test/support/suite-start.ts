import { Client } from 'pg';
import { cleanLeftovers } from './leftovers';

/**
 * Before each integration suite (setupFilesAfterEnv), in its jest worker's lane:
 *
 * - whatever an earlier suite of this worker left running (a failure before its afterAll) ends;
 * - webhook work an earlier suite left in motion in the lane's database (deliveries still pending
 *   or sending, recoveries still running) is settled as failed or cancelled. Every notifier's
 *   sweeper takes up overdue deliveries of the whole database, so another suite's hundreds of
 *   retries to its stopped listeners would otherwise fill this suite's notifier's slots for
 *   127.0.0.1 and hold its own deliveries back. (Their queued jobs then find nothing to claim.)
 *
 * The lane's Redis prefix stays shared: events an earlier suite left queued (a capture's
 * settlement) are still worked by the next suite's apps, so the lane's ledger stays whole.
 */

beforeAll(async () => {
  const cleaned = await cleanLeftovers(process.env.TEST_LEFTOVERS_DIR, true);
  if (process.env.DATABASE_URL && process.env.TEST_RUN_ID) {
    const db = new Client({ connectionString: process.env.DATABASE_URL });
    await db.connect();
    try {
      const deliveries = await db.query(
        `UPDATE deliveries SET status = 'failed', last_error = 'left in motion by an earlier suite', updated_at = now()
         WHERE status IN ('pending', 'sending')`,
      );
      const recoveries = await db.query(`UPDATE recoveries SET state = 'cancelled', finished_at = now() WHERE state = 'running'`);
      if (deliveries.rowCount) cleaned.push(`${deliveries.rowCount} deliveries settled as failed`);
      if (recoveries.rowCount) cleaned.push(`${recoveries.rowCount} recoveries cancelled`);
    } catch (e) {
      // A suite that made its database unusable (or a run before the tables exist) has nothing to settle.
      if (!/does not exist/.test((e as Error).message)) throw e;
    } finally {
      await db.end();
    }
  }
  if (cleaned.length)
    process.stdout.write(`\nbefore ${expect.getState().testPath}: what earlier suites of this worker left\n  ${cleaned.join('\n  ')}\n`);
});
