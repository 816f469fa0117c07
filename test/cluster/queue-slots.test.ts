import { HealthIndicatorService } from '@nestjs/terminus';
import { Queue } from 'bullmq';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Events, Patterns } from '@app/contracts';
import { queueOn } from '@app/messaging';
import { connectRedis, isCluster, type RedisConnection, type RedisTarget, scanKeys } from '@app/platform';
import { RedisHealthIndicator } from '@app/platform/redis-health';
import { DELIVERY_QUEUE, RECOVERY_QUEUE } from '@app/webhooks/delivery';
import { PrivateRedisCluster, startPrivateRedisCluster } from '../../scripts/lib/local-servers';
import { remember } from '../support/leftovers';

/**
 * On a Redis Cluster of its own (it stops a master at the end, which must never happen to the
 * run's Redis): every queue of the system keeps its keys in one slot of its own (its hash tag),
 * the queues together land on more than one master, and /health's Redis check goes down when a
 * master does.
 */
jest.setTimeout(120_000);

const QUEUES = [...Object.values(Patterns), ...Object.values(Events), DELIVERY_QUEUE, RECOVERY_QUEUE];

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
