import { MessageHandler } from '@nestjs/microservices';
import fc from 'fast-check';
import { Queue } from 'bullmq';
import { randomUUID } from 'node:crypto';
import { lastValueFrom } from 'rxjs';
import {
  BullMqClient,
  BullMqServer,
  EVENT_GROUP,
  type EventContext,
  type EventRetryPolicy,
  eventStreamKeys,
  listDead,
  queueOn,
  replayDead,
  streamDepth,
  withJobId,
} from '@app/messaging';
import type { RedisConnection } from '@app/platform';
import { testRedis, testRedisTarget } from '../support/redis';
import { eventually } from '../support/stack';

jest.setTimeout(120_000);

/** Starts a server: listen() reports its failures through its callback. */
const listen = (server: BullMqServer) =>
  new Promise<void>(
    (resolve, reject) =>
      void server.listen((e?: unknown) => (e ? reject(e instanceof Error ? e : new Error('listen failed', { cause: e })) : resolve())),
  );

interface Seen {
  id: string;
  attempt: number;
  ok: boolean;
  server: number;
}

/**
 * Durable events on Redis streams (libs/messaging/src/event-stream*.ts), against the real Redis:
 * every event published is handled until it succeeds or its attempts run out, whichever consumer
 * of the group dies, fails or duplicates; given-up events are kept, listed without payload, and
 * replayed. Histories are generated (fast-check), not hand-picked.
 */
describe('events on Redis streams', () => {
  const target = testRedisTarget();
  let redis: RedisConnection;

  beforeAll(() => {
    redis = testRedis({ maxRetriesPerRequest: null });
  });

  afterAll(() => {
    redis?.disconnect();
  });

  /** A server of the group handling `pattern`: the n-th attempt of an event fails while n ≤ its failures. */
  async function serverFor(
    prefix: string,
    pattern: string,
    index: number,
    seen: Seen[],
    failures: Map<string, number>,
    retry: Partial<EventRetryPolicy>,
    partitions = 1,
  ) {
    const server = new BullMqServer({
      connection: target,
      prefix,
      partitions,
      requiredPatterns: [pattern],
      defaultConcurrency: 4,
      eventRetry: retry,
    });
    server.addHandler(
      pattern,
      (async (data: { id: string }, ctx: EventContext) => {
        const ok = ctx.attempt() > (failures.get(data.id) ?? 0);
        seen.push({ id: data.id, attempt: ctx.attempt(), ok, server: index });
        if (!ok) throw new Error(`attempt ${ctx.attempt()} of ${data.id} fails`);
      }) as MessageHandler,
      true,
    );
    await listen(server);
    return server;
  }

  it('handles every event until it succeeds or runs out of attempts, across consumers that fail, duplicate and die', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.array(
          fc.record({
            failures: fc.integer({ min: 0, max: 3 }),
            copies: fc.integer({ min: 1, max: 2 }),
            // Read by a consumer that dies holding it (never acknowledged, never renewed).
            orphaned: fc.boolean(),
          }),
          { minLength: 1, maxLength: 12 },
        ),
        fc.integer({ min: 1, max: 2 }),
        async (events, partitions) => {
          const prefix = `${process.env.QUEUE_PREFIX}es${randomUUID().slice(0, 6)}`;
          const pattern = 'es.evt';
          const retry = { attempts: 3, backoffMs: 50, stallMs: 600, claimIntervalMs: 100 };
          const seen: Seen[] = [];
          const failures = new Map<string, number>();
          const ids = events.map((e, i) => {
            const id = `e${i}`;
            failures.set(id, e.failures);
            return id;
          });
          const keys = Array.from({ length: partitions }, (_, i) => eventStreamKeys(redis, prefix, pattern, i, partitions));
          // The group exists before anything is published, as a deployed consumer's would.
          for (const k of keys) await redis.xgroup('CREATE', k.stream, EVENT_GROUP, '0', 'MKSTREAM');
          const client = new BullMqClient({ connection: target, prefix, partitions });
          const servers: BullMqServer[] = [];
          try {
            const publish = async (orphaned: boolean) => {
              for (const [i, e] of events.entries())
                if (e.orphaned === orphaned)
                  for (let c = 0; c < e.copies; c++) await lastValueFrom(client.emit(pattern, withJobId({ id: ids[i] }, ids[i])));
            };
            // A consumer that dies: it reads the orphaned events first and never comes back.
            await publish(true);
            for (const k of keys) await redis.xreadgroup('GROUP', EVENT_GROUP, 'ghost', 'COUNT', 1000, 'STREAMS', k.stream, '>');
            await publish(false);
            servers.push(await serverFor(prefix, pattern, 0, seen, failures, retry, partitions));
            servers.push(await serverFor(prefix, pattern, 1, seen, failures, retry, partitions));
            const settled = async () => {
              const depths = await Promise.all(keys.map((k) => streamDepth(redis, k)));
              return depths.reduce((a, d) => ({ open: a.open + d.waiting + d.active, dead: a.dead + d.failed }), { open: 0, dead: 0 });
            };
            const expectedDead = ids.filter((id) => failures.get(id)! >= retry.attempts);
            await eventually(async () => expect(await settled()).toEqual({ open: 0, dead: expectedDead.length }), { timeoutMs: 30_000 });
            for (const [i, id] of ids.entries()) {
              const mine = seen.filter((s) => s.id === id);
              const f = failures.get(id)!;
              // The ghost had the orphaned ones' first delivery.
              const first = events[i].orphaned ? 2 : 1;
              if (f >= retry.attempts) {
                // Given up on: every attempt ran and failed, none ran past the budget.
                expect({ id, ok: mine.filter((s) => s.ok).length }).toEqual({ id, ok: 0 });
                expect(Math.max(...mine.map((s) => s.attempt))).toBeLessThanOrEqual(retry.attempts);
              } else {
                // Handled until it succeeded: the failures first, then one success (published twice: deduped).
                expect({ id, ok: mine.filter((s) => s.ok).length }).toEqual({ id, ok: 1 });
                expect({ id, attempts: mine.filter((s) => !s.ok).map((s) => s.attempt) }).toEqual({
                  id,
                  attempts: Array.from({ length: Math.max(0, f - first + 1) }, (_, n) => n + first),
                });
              }
            }
            const dead = (await Promise.all(keys.map((k) => listDead(redis, k, 100)))).flat();
            expect(dead.map((d) => d.eventId).sort()).toEqual(expectedDead.sort());
            // Listed without the payload.
            for (const d of dead) expect(Object.keys(d).sort()).toEqual(['deliveries', 'eventId', 'failedAt', 'id', 'reason']);
            // Replayed once the cause is gone: each runs again and succeeds, and the dead letters empty.
            for (const id of expectedDead) failures.set(id, 0);
            for (const k of keys) await replayDead(redis, k, 100);
            await eventually(async () => expect(await settled()).toEqual({ open: 0, dead: 0 }), { timeoutMs: 10_000 });
            for (const id of expectedDead) expect(seen.filter((s) => s.id === id && s.ok)).toHaveLength(1);
          } finally {
            await client.close();
            await Promise.all(servers.map((s) => s.close()));
            for (const k of keys) await redis.del(k.stream, k.dead);
            await redis.eval("for _, k in ipairs(redis.call('KEYS', ARGV[1])) do redis.call('DEL', k) end", 0, `${prefix}:*`);
          }
        },
      ),
      { numRuns: 6 },
    );
  });

  it('keeps what is in a handler from another consumer while its handler renews it', async () => {
    const prefix = `${process.env.QUEUE_PREFIX}es${randomUUID().slice(0, 6)}`;
    const pattern = 'es.slow';
    const runs: number[] = [];
    const make = async (n: number) => {
      const server = new BullMqServer({
        connection: target,
        prefix,
        requiredPatterns: [pattern],
        eventRetry: { stallMs: 300, claimIntervalMs: 50 },
      });
      server.addHandler(
        pattern,
        (async () => {
          runs.push(n);
          await new Promise((r) => setTimeout(r, 1_500));
        }) as MessageHandler,
        true,
      );
      await listen(server);
      return server;
    };
    const a = await make(1);
    const b = await make(2);
    const client = new BullMqClient({ connection: target, prefix });
    try {
      await lastValueFrom(client.emit(pattern, withJobId({}, 'slow-1')));
      const keys = eventStreamKeys(redis, prefix, pattern, 0, 1);
      await eventually(async () => expect(await streamDepth(redis, keys)).toMatchObject({ waiting: 0, active: 0 }), { timeoutMs: 10_000 });
      // Five times the stall bound in a handler, and run once.
      expect(runs).toHaveLength(1);
    } finally {
      await client.close();
      await Promise.all([a.close(), b.close()]);
      await redis.eval("for _, k in ipairs(redis.call('KEYS', ARGV[1])) do redis.call('DEL', k) end", 0, `${prefix}:*`);
    }
  });

  it('drains event jobs queued the old way (BullMQ) before the upgrade, and keeps within concurrency while events fail', async () => {
    const prefix = `${process.env.QUEUE_PREFIX}es${randomUUID().slice(0, 6)}`;
    const pattern = 'es.old';
    const old = new Queue(pattern, queueOn(redis, prefix, pattern));
    await old.add(pattern, { p: { id: 'queued-before' } }, { jobId: 'old-1' });
    await old.close();
    let running = 0;
    let most = 0;
    const done: string[] = [];
    const server = new BullMqServer({
      connection: target,
      prefix,
      requiredPatterns: [pattern],
      defaultConcurrency: 2,
      eventRetry: { attempts: 3, backoffMs: 300, stallMs: 2_000, claimIntervalMs: 100 },
    });
    server.addHandler(
      pattern,
      (async (data: { id: string }) => {
        most = Math.max(most, ++running);
        await new Promise((r) => setTimeout(r, 20));
        running--;
        if (data.id.startsWith('failing')) throw new Error('fails');
        done.push(data.id);
      }) as MessageHandler,
      true,
    );
    await listen(server);
    const client = new BullMqClient({ connection: target, prefix });
    try {
      await eventually(() => expect(done).toContain('queued-before'), { timeoutMs: 10_000 });
      for (let i = 0; i < 30; i++) await lastValueFrom(client.emit(pattern, withJobId({ id: `failing-${i}` }, `f${i}`)));
      for (let i = 0; i < 5; i++) await lastValueFrom(client.emit(pattern, withJobId({ id: `fine-${i}` }, `ok${i}`)));
      const keys = eventStreamKeys(redis, prefix, pattern, 0, 1);
      await eventually(async () => expect(await streamDepth(redis, keys)).toMatchObject({ waiting: 0, active: 0, failed: 30 }), {
        timeoutMs: 30_000,
      });
      expect(done.filter((id) => id.startsWith('fine'))).toHaveLength(5);
      // Failing entries waiting for their retry count against the concurrency of 2.
      expect(most).toBeLessThanOrEqual(2);
      // Two replays at once put each dead letter back once.
      const [a, b] = await Promise.all([replayDead(redis, keys, 100), replayDead(redis, keys, 100)]);
      expect(a + b).toBe(30);
    } finally {
      await client.close();
      await server.close();
      await redis.eval("for _, k in ipairs(redis.call('KEYS', ARGV[1])) do redis.call('DEL', k) end", 0, `${prefix}*`);
    }
  });
});
