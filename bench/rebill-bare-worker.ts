import type { MessageHandler } from '@nestjs/microservices';
import { BullMqServer } from '@app/messaging';
import { EnvReader, readRedisTarget } from '@app/platform';

/**
 * The rebill bench's baseline worker (bench/scenarios/rebills.ts), in a process of its own as the
 * tokenizer is: the gateway's own queue transport (BullMqServer: one BullMQ worker, the reply on
 * the caller's pub/sub channel) with a handler that answers at once, so a charge is one message
 * there and back and nothing else. argv: the pattern and the concurrency; Redis and the queue
 * prefix from the environment, as the apps read them. Prints "ready" once it listens.
 */
const [pattern, concurrency] = process.argv.slice(2);
const env = new EnvReader(process.env);
const connection = readRedisTarget(env);
env.done('bench bare worker');
const server = new BullMqServer({
  connection,
  prefix: process.env.QUEUE_PREFIX,
  requiredPatterns: [pattern],
  defaultConcurrency: Number(concurrency),
});
const answer = ((data: { id: string }) => Promise.resolve({ id: data.id })) as unknown as MessageHandler;
server.addHandler(pattern, answer, false);
void server.listen((err) => {
  if (err) {
    process.stderr.write(`bare worker: ${err instanceof Error ? err.message : 'could not listen'}\n`);
    process.exit(1);
  }
  process.stdout.write('ready\n');
});
process.on('SIGTERM', () => {
  void server.close().then(() => process.exit(0));
});
