import { Job, Queue, QueueOptions } from 'bullmq';
import type { RedisConnection } from '@app/platform/redis';
import { partitionIndex, partitionOn } from './queue-keys';

/** Where a pattern's queue lives: the connection, QUEUE_PREFIX and QUEUE_PARTITIONS. */
export interface QueuePlacement {
  connection: RedisConnection;
  prefix: string;
  /** How many partitions each pattern's queue is cut into (1: one queue, as always). */
  partitions?: number;
}

/**
 * One pattern's queue as its partitions: a BullMQ Queue per partition, and the one a job id goes
 * to. With one partition it is the pattern's plain queue, keys and all.
 */
export class PartitionedQueue {
  readonly all: readonly Queue[];
  readonly connection: RedisConnection;
  /** Jobs without an id have no partition of their own: they take turns. */
  private next = 0;

  constructor(
    readonly name: string,
    placement: QueuePlacement,
    options: Omit<QueueOptions, 'connection' | 'prefix'> = {},
  ) {
    const partitions = placement.partitions ?? 1;
    this.connection = placement.connection;
    this.all = Array.from({ length: partitions }, (_, i) => {
      const { name: queue, ...keys } = partitionOn(placement.connection, placement.prefix, name, i, partitions);
      return new Queue(queue, { ...options, ...keys }).on('error', () => undefined);
    });
  }

  /** The partition a job with this id is added to, and found in. */
  of(jobId: string | undefined): Queue {
    if (this.all.length === 1) return this.all[0];
    if (jobId === undefined) return this.all[this.next++ % this.all.length];
    return this.all[partitionIndex(jobId, this.all.length)];
  }

  getJob(jobId: string): Promise<Job | undefined> {
    return this.of(jobId).getJob(jobId);
  }

  async close(): Promise<void> {
    await Promise.all(this.all.map((q) => q.close().catch(() => undefined)));
  }
}
