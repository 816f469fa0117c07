import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { join } from 'node:path';
import { Client } from 'pg';
import { lastValueFrom } from 'rxjs';
import { BullMqClient, withJobId } from '@app/messaging';
import { EnvReader, readRedisTarget } from '@app/platform';
import { BenchStack } from '../lib/stack';

const BARE_PATTERN = 'bench.rebill-bare';

/**
 * The same work stripped bare: `n` rows of a table of their own, due at once, claimed
 * REBILL_BATCH at a time as the scheduler opens charges (one transaction: SELECT … FOR UPDATE SKIP
 * LOCKED in due order, read off the index, UPDATE), each sent through the gateway's own queue transport to a worker in another
 * process (TOKENIZER_CONCURRENCY at once) that answers at once, and moved on in one UPDATE per
 * batch. No transaction, vault, acquirer, outbox or settlement. Returns rows/s.
 */
export async function bareCycles(stack: BenchStack, db: Client, n: number): Promise<number> {
  const batch = Number(stack.env.REBILL_BATCH ?? 500);
  const concurrency = Number(stack.env.TOKENIZER_CONCURRENCY ?? 32);
  await db.query(`CREATE TABLE bench_bare_rebills (id uuid PRIMARY KEY, next_cycle int NOT NULL, next_due_at timestamptz, open_id uuid)`);
  await db.query(`CREATE INDEX bench_bare_rebills_due ON bench_bare_rebills (next_due_at) WHERE open_id IS NULL`);
  const worker = spawn(process.execPath, [join(__dirname, '..', 'bare-worker.js'), BARE_PATTERN, String(concurrency), 'answer'], {
    env: stack.env,
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  const env = new EnvReader(stack.env);
  const client = new BullMqClient({ connection: readRedisTarget(env), prefix: stack.env.QUEUE_PREFIX, replyTimeoutMs: 60_000 });
  env.done('bench');
  try {
    await once(worker.stdout, 'data');
    await db.query(
      `INSERT INTO bench_bare_rebills SELECT gen_random_uuid(), 1, now() - interval '1 second', NULL FROM generate_series(1, $1::int)`,
      [n],
    );
    await db.query('ANALYZE bench_bare_rebills');
    const started = process.hrtime.bigint();
    for (;;) {
      await db.query('BEGIN');
      const ids = (
        await db.query<{ id: string }>(
          `SELECT id FROM bench_bare_rebills WHERE open_id IS NULL AND next_due_at <= now() ORDER BY next_due_at LIMIT $1 FOR UPDATE SKIP LOCKED`,
          [batch],
        )
      ).rows.map((r) => r.id);
      await db.query(`UPDATE bench_bare_rebills SET open_id = gen_random_uuid() WHERE id = ANY($1::uuid[])`, [ids]);
      await db.query('COMMIT');
      if (!ids.length) break;
      await Promise.all(ids.map((id) => lastValueFrom(client.send(BARE_PATTERN, withJobId({ id }, `bare-${id}`)))));
      await db.query(
        `UPDATE bench_bare_rebills SET next_cycle = 2, next_due_at = next_due_at + interval '1 month', open_id = NULL WHERE id = ANY($1::uuid[])`,
        [ids],
      );
    }
    const seconds = Number(process.hrtime.bigint() - started) / 1e9;
    const [{ done }] = (await db.query<{ done: number }>('SELECT count(*)::int AS done FROM bench_bare_rebills WHERE next_cycle = 2')).rows;
    if (done !== n) throw new Error(`bare rebills: ${done} of ${n} moved on`);
    return n / seconds;
  } finally {
    await client.close();
    if (worker.exitCode === null) {
      worker.kill('SIGTERM');
      await once(worker, 'exit');
    }
    await db.query('DROP TABLE IF EXISTS bench_bare_rebills');
  }
}
