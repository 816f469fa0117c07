import { MessageHandler } from '@nestjs/microservices';
import { HealthIndicatorService } from '@nestjs/terminus';
import { Queue } from 'bullmq';
import { randomUUID } from 'node:crypto';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Events, Patterns, SALE_PATH_QUEUES } from '@app/contracts';
import { lastValueFrom } from 'rxjs';
import { BullMqClient, BullMqServer, EventContext, partitionOn, queueOn, withJobId } from '@app/messaging';
import { connectRedis, isCluster, type RedisConnection, type RedisTarget, scanKeys } from '@app/platform';
import { RedisHealthIndicator } from '@app/platform/redis-health';
import { DELIVERY_QUEUE, RECOVERY_QUEUE } from '@app/webhooks/delivery';
import { PrivateRedisCluster, startPrivateRedisCluster } from '../../scripts/lib/redis-cluster';
import { remember } from '../support/leftovers';
import { eventually } from '../support/stack';

/**
 * On a Redis Cluster of its own (it stops a master at the end, which must never happen to the
 * run's Redis): every queue of the system keeps its keys in one slot of its own (its hash tag),
 * the queues together land on more than one master, with QUEUE_PARTITIONS=3 the busy queues of
 * the sale path spread over every master, and /health's Redis check goes down when a master does.
 */
jest.setTimeout(120_000);

const QUEUES = [...Object.values(Patterns), ...Object.values(Events), DELIVERY_QUEUE, RECOVERY_QUEUE];
/** The queues every sale goes through, whose plain hash tags all fall on the first master. */
const HOT = SALE_PATH_QUEUES;

/** Calls per master since the last CONFIG RESETSTAT, from INFO commandstats. */
async function callsPerMaster(redis: RedisConnection): Promise<Map<string, number>> {
  if (!isCluster(redis)) throw new Error('not a cluster');
  const calls = new Map<string, number>();
  for (const node of redis.nodes('master')) {
    const info = await node.info('commandstats');
    const total = [...info.matchAll(/calls=(\d+)/g)].reduce((sum, m) => sum + Number(m[1]), 0);
    calls.set(`${node.options.host}:${node.options.port}`, total);
  }
  return calls;
}

describe('BullMQ queues on a Redis Cluster', () => {
  let cluster: PrivateRedisCluster;
  let target: RedisTarget;
  let redis: RedisConnection;
  const forgets: (() => void)[] = [];
  const prefix = `${process.env.QUEUE_PREFIX ?? 'gwt'}slots`;

  beforeAll(async () => {
    cluster = await startPrivateRedisCluster({ dir: mkdtempSync(join(tmpdir(), 'gwrc-')) });
    for (const n of cluster.nodes)
      forgets.push(remember({ kind: 'process', pid: n.pid()!, label: 'cluster node', marker: `:${n.port}`, dir: n.dir }));
    target = { url: cluster.nodes[0].url, clusterNodes: cluster.nodes.map((n) => ({ host: '127.0.0.1', port: n.port })) };
    redis = connectRedis(target, { maxRetriesPerRequest: null });
    redis.on('error', () => undefined);
  });

  afterAll(async () => {
    redis?.disconnect();
    await cluster?.destroy();
    for (const forget of forgets) forget();
  });

  it('gives each queue its own hash tag: one slot per queue, the queues spread over more than one master', async () => {
    expect(isCluster(redis)).toBe(true);
    // A job on every queue (delayed: nothing takes it), so each queue writes its keys.
    for (const name of QUEUES) {
      const queue = new Queue(name, queueOn(redis, prefix, name));
      await queue.add('probe', { n: 1 }, { delay: 3_600_000, jobId: `probe-${name}` });
      await queue.close();
    }
    // Where the keys are, as the masters themselves list them.
    const mastersOf = new Map<string, Set<string>>();
    const slotsOf = new Map<string, Set<number>>();
    for await (const { node, keys } of scanKeys(redis, `${prefix}:*`)) {
      for (const key of keys) {
        const queue = QUEUES.find((q) => key.startsWith(`${prefix}:{${q}}:${q}:`));
        expect({ key, queue }).toEqual({ key, queue: expect.any(String) });
        const slot = Number(await node.cluster('KEYSLOT', key));
        mastersOf.set(queue!, (mastersOf.get(queue!) ?? new Set()).add(`${node.options.host}:${node.options.port}`));
        slotsOf.set(queue!, (slotsOf.get(queue!) ?? new Set()).add(slot));
      }
    }
    expect([...mastersOf.keys()].sort()).toEqual([...QUEUES].sort());
    for (const q of QUEUES) {
      // Several keys per queue (meta, id, delayed, the job's hash, events), all in one slot on one master.
      expect({ q, slots: slotsOf.get(q)!.size, masters: mastersOf.get(q)!.size }).toEqual({ q, slots: 1, masters: 1 });
    }
    const slots = new Set(QUEUES.map((q) => [...slotsOf.get(q)!][0]));
    const masters = new Set(QUEUES.map((q) => [...mastersOf.get(q)!][0]));
    expect(slots.size).toBe(QUEUES.length);
    expect(masters.size).toBeGreaterThan(1);
  });

  it('with QUEUE_PARTITIONS=3 puts the hot queues on every master, none holding more than half of their partitions', async () => {
    const partitioned = `${prefix}p3`;
    const parts = HOT.flatMap((q) => [0, 1, 2].map((i) => partitionOn(redis, partitioned, q, i, 3)));
    for (const { name, ...keys } of parts) {
      const queue = new Queue(name, keys);
      await queue.add('probe', { n: 1 }, { delay: 3_600_000, jobId: `probe-${name}` });
      await queue.close();
    }
    const mastersOf = new Map<string, Set<string>>();
    for await (const { node, keys } of scanKeys(redis, `${partitioned}:*`)) {
      for (const key of keys) {
        const part = parts.find((p) => key.startsWith(`${p.prefix}:${p.name}:`));
        expect({ key, part: part?.name }).toEqual({ key, part: expect.any(String) });
        mastersOf.set(part!.name, (mastersOf.get(part!.name) ?? new Set()).add(`${node.options.host}:${node.options.port}`));
      }
    }
    expect([...mastersOf.keys()].sort()).toEqual(parts.map((p) => p.name).sort());
    const perMaster = new Map<string, number>();
    for (const [name, masters] of mastersOf) {
      expect({ name, masters: masters.size }).toEqual({ name, masters: 1 });
      const master = [...masters][0];
      perMaster.set(master, (perMaster.get(master) ?? 0) + 1);
    }
    expect(perMaster.size).toBe(cluster.nodes.length);
    expect(Math.max(...perMaster.values())).toBeLessThanOrEqual(parts.length / 2);
  });

  it('with QUEUE_PARTITIONS=3 carries events over every master, none serving more than half of the commands', async () => {
    const partitioned = `${prefix}t3`;
    const patterns = [Events.TransactionStatusChanged, Events.TransactionCaptured];
    const handled: { queue: string; id: string }[] = [];
    const record = (async (_data: unknown, ctx: EventContext) => {
      handled.push({ queue: ctx.getPartition(), id: ctx.getEntry().eventId });
    }) as MessageHandler;
    const server = new BullMqServer({
      connection: target,
      prefix: partitioned,
      partitions: 3,
      requiredPatterns: patterns,
      defaultConcurrency: 6,
    });
    for (const pattern of patterns) server.addHandler(pattern, record, true);
    const client = new BullMqClient({ connection: target, prefix: partitioned, partitions: 3 });
    try {
      await new Promise<void>(
        (resolve, reject) =>
          void server.listen((e?: unknown) => (e ? reject(e instanceof Error ? e : new Error('listen failed', { cause: e })) : resolve())),
      );
      await client.connect();
      if (!isCluster(redis)) throw new Error('not a cluster');
      for (const node of redis.nodes('master')) await node.config('RESETSTAT');
      const ids = Array.from({ length: 150 }, () => randomUUID());
      // Each event twice, as an outbox relay retrying would: one entry, on the stream of the id's one partition.
      for (const id of ids)
        for (const pattern of patterns) for (let n = 0; n < 2; n++) await lastValueFrom(client.emit(pattern, withJobId({ n }, id)));
      await eventually(() => expect(handled.length).toBe(ids.length * patterns.length), { timeoutMs: 30_000 });
      // Both of one id's events went to partitions of the same index, each handled once.
      for (const id of ids) {
        const where = handled.filter((h) => h.id === id).map((h) => h.queue.split('#')[1]);
        expect({ id, partitions: new Set(where).size, jobs: where.length }).toEqual({ id, partitions: 1, jobs: 2 });
      }
      expect(new Set(handled.map((h) => h.queue)).size).toBe(6);
      const calls = await callsPerMaster(redis);
      const total = [...calls.values()].reduce((a, b) => a + b, 0);
      expect(calls.size).toBe(cluster.nodes.length);
      for (const [master, n] of calls) expect({ master, overHalf: n > total / 2 }).toEqual({ master, overHalf: false });
    } finally {
      await client.close();
      await server.close();
    }
  });

  it('reports Redis down when one master stops, up while all answer', async () => {
    const health = new RedisHealthIndicator(target, new HealthIndicatorService());
    try {
      const up = async () => (await health.isHealthy('redis')).redis.status;
      for (let i = 0; (await up()) !== 'up'; i++) {
        if (i > 100) throw new Error('the health check never saw the cluster up');
        await new Promise((r) => setTimeout(r, 100));
      }
      await cluster.nodes[1].stop('SIGKILL');
      const started = Date.now();
      let status = await up();
      while (status !== 'down' && Date.now() - started < 10_000) {
        await new Promise((r) => setTimeout(r, 100));
        status = await up();
      }
      expect(status).toBe('down');
      // And it stays down (no node answering for the stopped one's slots), however often it is asked.
      expect(await up()).toBe('down');
    } finally {
      health.onApplicationShutdown();
    }
  });
});
