import { Queue } from 'bullmq';
import { Gauge } from 'prom-client';
import type { RedisConnection } from '@app/platform/redis';
import { PartitionedQueue } from './partitioned-queue';
import { eventStreamKeys, streamDepth, type EventStreamKeys } from './event-stream';

/**
 * Queue depth for autoscaling, read from Redis when /metrics is scraped: per queue, how many jobs
 * wait, run, are delayed (retries waiting out their backoff) or failed for good, and how long the
 * oldest waiting job has waited. Every replica of a worker reports the same numbers (they are the
 * queue's, not the process's): aggregate them with max, not sum.
 *
 * A scrape reads each queue with two round trips (BullMQ's counts script, then the head of the
 * wait list and that job's timestamps), all queues at once, and gives up after `timeoutMs`: Redis
 * slow or down leaves the gauges at their last values and `queue_depth_up` at 0, and /metrics
 * still answers. A queue cut into partitions (QUEUE_PARTITIONS) is reported as one: its counts
 * are the partitions' sums, its oldest waiting job the oldest of any partition.
 *
 * An event pattern travels on a stream, not a BullMQ queue (event-stream.ts), and is reported
 * under the same gauges: waiting is what its group has not read yet, active what it read and has
 * not acknowledged (in a handler, or waiting for a retry), failed its dead letters, delayed 0.
 */

export interface QueueDepthOptions {
  /** An open connection of the process (shared: it is neither duplicated nor closed here). */
  connection: RedisConnection;
  prefix: string;
  /** The transport's queues, each cut into `partitions`. */
  queues: readonly string[];
  /** How many partitions each of `queues` has (QUEUE_PARTITIONS). Default 1. */
  partitions?: number;
  /** Which of `queues` are event patterns, read from their streams. */
  events?: readonly string[];
  /** Queues fed outside the transport, never partitioned (the notifier's delivery queue). */
  observeQueues?: readonly string[];
  /** The longest a scrape waits for Redis. Default 1 s. */
  timeoutMs?: number;
}

export interface QueueDepth {
  waiting: number;
  active: number;
  delayed: number;
  failed: number;
  /** Seconds since the oldest waiting job became ready (added, or its delay ran out; see oldestAge); 0 when none waits. */
  oldestWaitingAgeS: number;
}

const LABELS = ['queue'] as const;

/** The five gauges are collected one after another on the same scrape: one read of Redis serves them all. */
const FRESH_FOR_MS = 500;

const sources = new Set<QueueDepthReader>();
let latest: { at: number; read: Promise<void> } | undefined;

async function refresh(): Promise<void> {
  if (latest && Date.now() - latest.at < FRESH_FOR_MS) return latest.read;
  const read = Promise.all([...sources].map((s) => s.refresh())).then(() => undefined);
  latest = { at: Date.now(), read };
  return read;
}

function depthGauge(name: string, help: string, pick: (d: QueueDepth) => number): Gauge<'queue'> {
  return new Gauge({
    name,
    help,
    labelNames: LABELS,
    async collect() {
      await refresh();
      for (const source of sources) for (const [queue, depth] of source.last) this.set({ queue }, pick(depth));
    },
  });
}

let registered = false;

/** Registered with the first reader, so a process that reads no queue (the api) exports none of them. */
function registerGauges(): void {
  if (registered) return;
  registered = true;
  depthGauge('queue_waiting_jobs', 'Jobs waiting for a worker, per queue', (d) => d.waiting);
  depthGauge('queue_active_jobs', 'Jobs being processed by some worker, per queue', (d) => d.active);
  depthGauge('queue_delayed_jobs', 'Jobs delayed (retries waiting out their backoff), per queue', (d) => d.delayed);
  depthGauge('queue_failed_jobs', 'Jobs that failed for good and are kept for inspection, per queue', (d) => d.failed);
  depthGauge(
    'queue_oldest_waiting_age_seconds',
    'How long the oldest waiting job has been ready without a worker taking it (0 when none waits), per queue',
    (d) => d.oldestWaitingAgeS,
  );
  new Gauge({
    name: 'queue_depth_up',
    help: "1 when the last scrape read every queue's depth from Redis, 0 when Redis failed or was too slow (the depth gauges then keep their last values)",
    async collect() {
      await refresh();
      this.set([...sources].every((s) => s.ok) ? 1 : 0);
    },
  });
}

/** Partitions' depths as one: counts add up, the oldest waiting is the oldest of any (a stream has no delayed entries). */
function sumDepths(parts: (Omit<QueueDepth, 'delayed'> & { delayed?: number })[]): QueueDepth {
  return parts.reduce<QueueDepth>(
    (sum, d) => ({
      waiting: sum.waiting + d.waiting,
      active: sum.active + d.active,
      delayed: sum.delayed + (d.delayed ?? 0),
      failed: sum.failed + d.failed,
      oldestWaitingAgeS: Math.max(sum.oldestWaitingAgeS, d.oldestWaitingAgeS),
    }),
    { waiting: 0, active: 0, delayed: 0, failed: 0, oldestWaitingAgeS: 0 },
  );
}

/** Reads the depth of some queues for the gauges above, from the moment it is created until `close`. */
export class QueueDepthReader {
  readonly last = new Map<string, QueueDepth>();
  ok = true;
  private readonly queues: PartitionedQueue[];
  private readonly streams: { name: string; partitions: EventStreamKeys[] }[];
  private readonly timeoutMs: number;
  /** Per queue, an attempted job at the tail of its wait list and when a scrape first found it there. */
  private readonly tails = new Map<string, { id: string; since: number }>();

  constructor(private readonly options: QueueDepthOptions) {
    this.timeoutMs = options.timeoutMs ?? 1_000;
    const { connection, prefix } = options;
    const events = new Set(options.events);
    const partitioned = [...new Set(options.queues)].filter((name) => !events.has(name));
    const plain = [...new Set(options.observeQueues)].filter((name) => !partitioned.includes(name) && !events.has(name));
    const n = options.partitions ?? 1;
    this.streams = [...events].map((name) => ({
      name,
      partitions: Array.from({ length: n }, (_, i) => eventStreamKeys(connection, prefix, name, i, n)),
    }));
    this.queues = [
      ...partitioned.map((name) => new PartitionedQueue(name, { connection, prefix, partitions: options.partitions })),
      ...plain.map((name) => new PartitionedQueue(name, { connection, prefix })),
    ];
    registerGauges();
    sources.add(this);
  }

  /** The depth of every queue now; rejects when Redis fails or takes longer than the timeout. */
  async read(): Promise<Map<string, QueueDepth>> {
    let timer: NodeJS.Timeout | undefined;
    const timeout = new Promise<never>((_, reject) => {
      timer = setTimeout(() => reject(new Error(`queue depth not read within ${this.timeoutMs} ms`)), this.timeoutMs);
    });
    try {
      const reads = [
        ...this.queues.map(async (q) => [q.name, await this.depthOf(q)] as const),
        ...this.streams.map(async (s) => [s.name, await this.streamDepthOf(s.partitions)] as const),
      ];
      return new Map(await Promise.race([Promise.all(reads), timeout]));
    } finally {
      clearTimeout(timer);
    }
  }

  async refresh(): Promise<void> {
    try {
      for (const [queue, depth] of await this.read()) this.last.set(queue, depth);
      this.ok = true;
    } catch {
      this.ok = false;
    }
  }

  async close(): Promise<void> {
    sources.delete(this);
    await Promise.all(this.queues.map((q) => q.close()));
  }

  /** A queue's depth summed over its partitions; its oldest waiting job is the oldest in any of them. */
  private async depthOf(queue: PartitionedQueue): Promise<QueueDepth> {
    return sumDepths(await Promise.all(queue.all.map((q) => this.partitionDepth(q))));
  }

  /** An event pattern's depth summed over its partitions' streams. */
  private async streamDepthOf(partitions: EventStreamKeys[]): Promise<QueueDepth> {
    return sumDepths(await Promise.all(partitions.map((keys) => streamDepth(this.options.connection, keys))));
  }

  private async partitionDepth(queue: Queue): Promise<QueueDepth> {
    const [counts, oldestWaitingAgeS] = await Promise.all([
      queue.getJobCounts('waiting', 'active', 'delayed', 'failed'),
      this.oldestAge(queue),
    ]);
    return { waiting: counts.waiting, active: counts.active, delayed: counts.delayed, failed: counts.failed, oldestWaitingAgeS };
  }

  /**
   * Jobs enter the wait list at its head and workers take them from its tail: the tail is the oldest.
   *
   * When it became ready: a job never attempted became ready at its creation plus the delay it was
   * added with (`opts.delay`: BullMQ zeroes the hash's own `delay` when it promotes the job, so that
   * one says nothing). A job that has been attempted (a retry waiting out its backoff, a delivery
   * put back under its listener's throttle) keeps its creation time through every retry, and when
   * its backoff ran out is recorded nowhere: its age is counted from the first scrape that found it
   * at the tail, so it may be low by up to one scrape interval, never high by its backoff.
   */
  private async oldestAge(queue: Queue): Promise<number> {
    const id = await this.options.connection.lindex(queue.toKey('wait'), -1);
    if (!id) {
      this.tails.delete(queue.name);
      return 0;
    }
    const [timestamp, opts, attemptsMade, processedOn] = await this.options.connection.hmget(
      queue.toKey(id),
      'timestamp',
      'opts',
      'attemptsMade',
      'processedOn',
    );
    // Taken by a worker between the two reads: nothing old waits at that moment.
    if (!timestamp) return 0;
    const now = Date.now();
    if (Number(attemptsMade ?? 0) > 0 || processedOn) {
      const seen = this.tails.get(queue.name);
      const since = seen?.id === id ? seen.since : now;
      this.tails.set(queue.name, { id, since });
      return (now - since) / 1000;
    }
    this.tails.delete(queue.name);
    const readyAt = Number(timestamp) + addedDelayMs(opts);
    return Math.max(0, (now - readyAt) / 1000);
  }
}

/** The delay a job was added with, from its stored options (0 when none or unreadable). */
function addedDelayMs(opts: string | null): number {
  try {
    const delay = (JSON.parse(opts ?? '{}') as { delay?: unknown }).delay;
    return typeof delay === 'number' && Number.isFinite(delay) && delay > 0 ? delay : 0;
  } catch {
    return 0;
  }
}
