import { randomUUID } from 'node:crypto';
import Fastify from 'fastify';
import { lastValueFrom } from 'rxjs';
import { BullMqClient, withJobId } from '@app/messaging';
import { EnvReader, readRedisTarget } from '@app/platform';

/**
 * The bare sale pipeline's front (bench/lib/baseline.ts): a Fastify route that adds one job with
 * the gateway's own queue transport and settings (BullMqClient: the job, the reply on this
 * process's pub/sub channel), waits for the bare worker's reply and answers a fixed body of the
 * gateway's size. No validation, authentication, rate limit, outbox or settlement: the crossings
 * of a sale and nothing else, the floor this architecture allows on the machine. argv: the pattern
 * and the body; Redis and the queue prefix from the environment. Prints its port once it listens.
 */
const [pattern, body] = process.argv.slice(2);
const env = new EnvReader(process.env);
const client = new BullMqClient({ connection: readRedisTarget(env), prefix: process.env.QUEUE_PREFIX, replyTimeoutMs: 60_000 });
env.done('bench bare pipeline');
const app = Fastify();
app.post('/*', async (_req, reply) => {
  const id = randomUUID();
  await lastValueFrom(client.send(pattern, withJobId({ id }, `bare-${id}`)));
  return reply.header('content-type', 'application/json').send(body);
});
void app.listen({ port: 0, host: '127.0.0.1' }).then(() => {
  const addr = app.server.address();
  process.stdout.write(`${typeof addr === 'object' && addr ? addr.port : 0}\n`);
});
process.on('SIGTERM', () => {
  void Promise.all([app.close(), client.close()]).then(() => process.exit(0));
});
