import { MessageHandler } from '@nestjs/microservices';
import { Queue } from 'bullmq';
import { randomUUID } from 'node:crypto';
import { register } from 'prom-client';
import { lastValueFrom } from 'rxjs';
import { BullMqClient, BullMqServer, PartitionedQueue, QueueDepthReader, queueOn } from '@app/messaging';
import { connectRedis, type RedisConnection } from '@app/platform';
import { testRedis, testRedisTarget } from '../support/redis';
import { sampleValue } from '../support/metrics';
import { eventually, PrivateServer, startPrivateRedis } from '../support/stack';

jest.setTimeout(60_000);

/** The value of one sample of this process's registry, e.g. value('queue_waiting_jobs', { queue: 'x' }); undefined when absent. */
async function value(name: string, labels: Record<string, string> = {}): Promise<number | undefined> {
  return sampleValue(await register.metrics(), name, labels);
}

/**
 * The autoscaling signals against real Redis: a worker's /metrics registry shows the depth of each
 * queue it consumes or observes (waiting, active, delayed, failed, the oldest waiting job's age),
 * the caller's shows its reply waits, the numbers follow the queue, and a Redis that stops
 * answering neither breaks nor stalls a scrape.
 */
describe('queue depth and reply-wait metrics (real Redis)', () => {
  const target = testRedisTarget();
  const prefix = `${process.env.QUEUE_PREFIX}qm${randomUUID().slice(0, 6)}`;
  const held: (() => void)[] = [];
  let server: BullMqServer;
  let client: BullMqClient;
  let observed: Queue;
  let redis: RedisConnection;

  beforeAll(async () => {
    server = new BullMqServer({
      connection: target,
      prefix,
      requiredPatterns: ['qm.hold', 'qm.evt'],
      concurrency: { 'qm.hold': 1 },
      defaultConcurrency: 4,
      observeQueues: ['qm.observed'],
      eventRetry: { attempts: 1 },
    });
    // Holds each job until the test releases it: one runs (concurrency 1), the rest wait.
    server.addHandler('qm.hold', (() => new Promise<string>((resolve) => held.push(() => resolve('done')))) as MessageHandler);
    server.addHandler('qm.evt', (() => Promise.reject(new Error('always fails'))) as MessageHandler, true);
    await new Promise<void>((resolve, reject) => {
      void server.listen((err?: unknown) =>
        err ? reject(err instanceof Error ? err : new Error('listen failed', { cause: err })) : resolve(),
      );
    });
    client = new BullMqClient({ connection: target, prefix, replyTimeoutMs: 30_000 });
    await client.connect();
    redis = testRedis();
    observed = new Queue('qm.observed', queueOn(redis, prefix, 'qm.observed'));
  });

  afterAll(async () => {
    held.forEach((release) => release());
    await client?.close();
    await server?.close();
    await observed?.obliterate({ force: true }).catch(() => undefined);
    await observed?.close();
    redis?.disconnect();
  });

  it('shows waiting and active jobs and the reply waits, and both fall back once the jobs are done', async () => {
    expect(await value('queue_waiting_jobs', { queue: 'qm.hold' })).toBe(0);
    expect(await value('queue_active_jobs', { queue: 'qm.hold' })).toBe(0);
    const replies = Array.from({ length: 3 }, (_, i) => lastValueFrom(client.send('qm.hold', { i })));
    await eventually(async () => {
      expect(await value('queue_active_jobs', { queue: 'qm.hold' })).toBe(1);
      expect(await value('queue_waiting_jobs', { queue: 'qm.hold' })).toBe(2);
    });
    expect(await value('queue_reply_waits', { pattern: 'qm.hold' })).toBe(3);
    await new Promise((r) => setTimeout(r, 1_100));
    expect(await value('queue_oldest_waiting_age_seconds', { queue: 'qm.hold' })).toBeGreaterThanOrEqual(1);

    // Release them one by one (each next job starts only when the previous one ends).
    const release = setInterval(() => held.shift()?.(), 50);
    await expect(Promise.all(replies)).resolves.toEqual(['done', 'done', 'done']);
    clearInterval(release);
    await eventually(async () => {
      expect(await value('queue_waiting_jobs', { queue: 'qm.hold' })).toBe(0);
      expect(await value('queue_active_jobs', { queue: 'qm.hold' })).toBe(0);
      expect(await value('queue_oldest_waiting_age_seconds', { queue: 'qm.hold' })).toBe(0);
    });
    expect(await value('queue_reply_waits', { pattern: 'qm.hold' })).toBe(0);
  });

  it('counts an observed queue: the oldest waiting job sets the age, delayed jobs apart', async () => {
    await observed.add('x', { n: 1 });
    await new Promise((r) => setTimeout(r, 1_500));
    await observed.add('x', { n: 2 });
    await observed.add('x', { n: 3 }, { delay: 60_000 });
    await eventually(async () => {
      expect(await value('queue_waiting_jobs', { queue: 'qm.observed' })).toBe(2);
      expect(await value('queue_delayed_jobs', { queue: 'qm.observed' })).toBe(1);
    });
    // The first job's age, not the second's (added 1.5 s later).
    const age = (await value('queue_oldest_waiting_age_seconds', { queue: 'qm.observed' }))!;
    expect(age).toBeGreaterThanOrEqual(1.5);
    expect(age).toBeLessThan(30);
  });

  it('ages a job that waited out a delay from when it became ready, not from when it was added', async () => {
    const name = 'qm.promoted';
    const queue = new Queue(name, queueOn(redis, prefix, name));
    const reader = new QueueDepthReader({ connection: redis, prefix, queues: [name] });
    try {
      // Added with a minute's delay, then made ready at once: BullMQ zeroes the job's delay and keeps its creation time.
      const job = await queue.add('x', { n: 1 }, { delay: 60_000 });
      await new Promise((r) => setTimeout(r, 1_200));
      await job.promote();
      const depth = (await reader.read()).get(name)!;
      expect(depth.waiting).toBe(1);
      // Created 1.2 s ago, ready just now: never counted from its creation.
      expect(depth.oldestWaitingAgeS).toBeLessThan(1);
    } finally {
      await reader.close();
      await queue.obliterate({ force: true });
      await queue.close();
    }
  });

  it('reports a queue cut into partitions as one: their counts summed, the oldest of them its age', async () => {
    const name = 'qm.parts';
    const queue = new PartitionedQueue(name, { connection: redis, prefix, partitions: 3 });
    const reader = new QueueDepthReader({ connection: redis, prefix, queues: [name], partitions: 3, observeQueues: ['qm.plain'] });
    try {
      expect(queue.all.map((q) => q.name)).toEqual(['qm.parts#0', 'qm.parts#1', 'qm.parts#2']);
      const ids = Array.from({ length: 12 }, (_, i) => `qm-part-${i}`);
      for (const id of ids) await queue.of(id).add('x', { id }, { jobId: id });
      // Each job is found again by its id alone, in the partition the id picks; more than one partition holds some.
      for (const id of ids) expect((await queue.getJob(id))?.data).toEqual({ id });
      const held = await Promise.all(queue.all.map((q) => q.getWaitingCount()));
      expect(held.filter((n) => n > 0).length).toBeGreaterThan(1);
      await new Promise((r) => setTimeout(r, 1_100));
      const depths = await reader.read();
      expect([...depths.keys()].sort()).toEqual([name, 'qm.plain']);
      expect(depths.get(name)).toMatchObject({ waiting: 12, active: 0, delayed: 0, failed: 0 });
      expect(depths.get(name)!.oldestWaitingAgeS).toBeGreaterThanOrEqual(1);
    } finally {
      await reader.close();
      for (const q of queue.all) await q.obliterate({ force: true });
      await queue.close();
    }
  });

  it('counts an event that failed for good (its dead letter)', async () => {
    await lastValueFrom(client.emit('qm.evt', { id: 'f' }));
    await eventually(async () => expect(await value('queue_failed_jobs', { queue: 'qm.evt' })).toBe(1), { timeoutMs: 10_000 });
    expect(await value('queue_depth_up')).toBe(1);
  });

  describe('with a Redis that stops', () => {
    let lost: PrivateServer;
    let conn: RedisConnection;
    let reader: QueueDepthReader;

    beforeAll(async () => {
      lost = await startPrivateRedis();
      conn = connectRedis({ url: lost.url }, { maxRetriesPerRequest: null }).on('error', () => undefined);
      reader = new QueueDepthReader({ connection: conn, prefix, queues: ['qm.lost'], timeoutMs: 500 });
      const q = new Queue('qm.lost', { connection: conn, prefix }).on('error', () => undefined);
      await q.add('x', {});
      await q.close();
    });

    afterAll(async () => {
      await reader?.close();
      conn?.disconnect();
      await lost?.destroy();
    });

    it('still answers /metrics within the cap, with the last values and queue_depth_up 0', async () => {
      await eventually(async () => expect(await value('queue_waiting_jobs', { queue: 'qm.lost' })).toBe(1));
      expect(await value('queue_depth_up')).toBe(1);
      await lost.stop('SIGKILL');
      // Past the memo of the last read, so the next scrape goes to Redis again.
      await new Promise((r) => setTimeout(r, 600));
      const started = Date.now();
      expect(await value('queue_depth_up')).toBe(0);
      expect(Date.now() - started).toBeLessThan(2_000);
      // The other queues' numbers are still there, and this one's last value is kept.
      expect(await value('queue_waiting_jobs', { queue: 'qm.lost' })).toBe(1);
      expect(await value('queue_waiting_jobs', { queue: 'qm.hold' })).toBe(0);
    });
  });
});
