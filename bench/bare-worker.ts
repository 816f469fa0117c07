import type { MessageHandler } from '@nestjs/microservices';
import { Pool } from 'pg';
import { BullMqServer } from '@app/messaging';
import { EnvReader, readRedisTarget } from '@app/platform';

/**
 * The bench's bare workers, in a process of their own as the tokenizer is: the gateway's own queue
 * transport (BullMqServer: one BullMQ worker, the reply on the caller's pub/sub channel) with a
 * handler that does the least the scenario's floor needs. argv: the pattern, the concurrency, and
 * the mode: `answer` (the rebill bench: answers at once, so a charge is one message there and
 * back) or `insert` (the bare sale pipeline: one `INSERT … RETURNING` into `bench_bare_pipeline`
 * on a pool as large as the tokenizer's, then the answer). Redis, Postgres and the queue prefix
 * from the environment, as the apps read them. Prints "ready" once it listens.
 */
const [pattern, concurrency, mode = 'answer'] = process.argv.slice(2);
const env = new EnvReader(process.env);
const connection = readRedisTarget(env);
env.done('bench bare worker');
const server = new BullMqServer({
  connection,
  prefix: process.env.QUEUE_PREFIX,
  requiredPatterns: [pattern],
  defaultConcurrency: Number(concurrency),
});
const pool =
  mode === 'insert' ? new Pool({ connectionString: process.env.DATABASE_URL, max: Number(process.env.DB_POOL_SIZE ?? 16) }) : undefined;
const insert = async (data: { id: string }) => {
  const { rows } = await pool!.query<{ id: string }>('INSERT INTO bench_bare_pipeline (id) VALUES ($1) RETURNING id', [data.id]);
  return { id: rows[0].id };
};
const answer = ((data: { id: string }) => (pool ? insert(data) : Promise.resolve({ id: data.id }))) as unknown as MessageHandler;
server.addHandler(pattern, answer, false);
void server.listen((err) => {
  if (err) {
    process.stderr.write(`bare worker: ${err instanceof Error ? err.message : 'could not listen'}\n`);
    process.exit(1);
  }
  process.stdout.write('ready\n');
});
process.on('SIGTERM', () => {
  void Promise.all([server.close(), pool?.end()]).then(() => process.exit(0));
});
