import { isCluster, type RedisConnection } from '@app/platform/redis';

/**
 * Where a BullMQ queue keeps its keys: `connection` and the key prefix, for `new Queue(name, …)`
 * and `new Worker(name, …)`.
 *
 * On one Redis server the prefix is the deployment's QUEUE_PREFIX (keys `gw:<queue>:…`), as it
 * always was. On a Redis Cluster every BullMQ script touches several keys of its queue, and a
 * cluster runs a script only when all its keys hash to one slot: the prefix gains the queue's own
 * hash tag, `gw:{<queue>}` (keys `gw:{<queue>}:<queue>:…`), so each queue's keys share a slot and
 * different queues hash to different slots, spread over the masters. Keys still start with
 * QUEUE_PREFIX, so runs and deployments sharing a cluster stay apart.
 */
export function queueOn<C extends RedisConnection>(connection: C, prefix: string, queue: string): { connection: C; prefix: string } {
  return { connection, prefix: isCluster(connection) ? `${prefix}:{${queue}}` : prefix };
}

/** How many hash slots a Redis Cluster has. */
export const CLUSTER_SLOTS = 16_384;

const CRC16_TABLE = Array.from({ length: 256 }, (_, byte) => {
  let crc = byte << 8;
  for (let bit = 0; bit < 8; bit++) crc = crc & 0x8000 ? ((crc << 1) ^ 0x1021) & 0xffff : (crc << 1) & 0xffff;
  return crc;
});

/** The cluster slot of a key without braces, or of a hash tag: CRC16 (XMODEM) of its bytes, as Redis computes it. */
export function slotOf(tag: string): number {
  let crc = 0;
  for (const byte of Buffer.from(tag, 'utf8')) crc = ((crc << 8) & 0xffff) ^ CRC16_TABLE[((crc >> 8) ^ byte) & 0xff];
  return crc % CLUSTER_SLOTS;
}

/**
 * The queue name of partition `index` of `partitions`: the pattern itself when there is one
 * partition (QUEUE_PARTITIONS=1 keeps every name and key as it always was), `<pattern>#<index>`
 * otherwise (BullMQ refuses ':' in a name).
 */
export function partitionName(queue: string, index: number, partitions: number): string {
  return partitions === 1 ? queue : `${queue}#${index}`;
}

/**
 * Which partition a job goes to: FNV-1a of its id, so every job of one id (a sale's authorization
 * carries its transaction's id, an outbox event its row's) lands in the same partition, where
 * BullMQ's dedup by job id still works.
 */
export function partitionIndex(jobId: string, partitions: number): number {
  if (partitions === 1) return 0;
  let hash = 0x811c9dc5;
  for (let i = 0; i < jobId.length; i++) hash = Math.imul(hash ^ jobId.charCodeAt(i), 0x01000193) >>> 0;
  return hash % partitions;
}

/**
 * The slots partition `index`'s hash tag is placed in: the middle half of the index-th of
 * `partitions` equal slices of the slot space. The i-th partition of every queue thus sits in the
 * same slice, and a cluster whose masters split the slots evenly (as `redis-cli --cluster create`
 * does) gives each master an even share of every queue when the partitions are a multiple of the
 * masters. The middle half keeps a tag clear of a slice's edges, where a master's range may start
 * a slot earlier or later than the slice.
 */
export function partitionSlotRange(index: number, partitions: number): { from: number; to: number } {
  const lo = Math.floor((index * CLUSTER_SLOTS) / partitions);
  const hi = Math.floor(((index + 1) * CLUSTER_SLOTS) / partitions);
  const quarter = Math.floor((hi - lo) / 4);
  return { from: lo + quarter, to: hi - quarter };
}

const tags = new Map<string, string>();

/**
 * The hash tag of a partition on a cluster: its name plus the first short suffix (`~0`, `~1`, …
 * in base 36) whose slot lies in the partition's range. A pure function of the queue, the index
 * and the count, so producers and consumers in every process agree on it.
 */
export function partitionTag(queue: string, index: number, partitions: number): string {
  const name = partitionName(queue, index, partitions);
  if (partitions === 1) return name;
  const known = tags.get(name + '/' + partitions);
  if (known) return known;
  const { from, to } = partitionSlotRange(index, partitions);
  for (let n = 0; n < 1_000_000; n++) {
    const tag = `${name}~${n.toString(36)}`;
    const slot = slotOf(tag);
    if (slot >= from && slot < to) {
      tags.set(name + '/' + partitions, tag);
      return tag;
    }
  }
  throw new Error(`no hash tag found for ${name} in slots ${from}-${to - 1}`);
}

/**
 * Where partition `index` of a queue keeps its keys, and its name: with one partition exactly
 * `queueOn` and the queue's own name. With more, on one server each partition is a queue of its
 * own name under QUEUE_PREFIX; on a cluster its prefix carries the partition's tag
 * (`gw:{card.authorize#0~k}`), placed so the partitions spread over the slots.
 */
export function partitionOn<C extends RedisConnection>(
  connection: C,
  prefix: string,
  queue: string,
  index: number,
  partitions: number,
): { name: string; connection: C; prefix: string } {
  const name = partitionName(queue, index, partitions);
  if (partitions === 1) return { name, ...queueOn(connection, prefix, queue) };
  return { name, connection, prefix: isCluster(connection) ? `${prefix}:{${partitionTag(queue, index, partitions)}}` : prefix };
}

/** A pattern's worker concurrency cut over its partitions: the same total, at least 1 each. */
export function splitConcurrency(total: number, partitions: number): number[] {
  const base = Math.floor(total / partitions);
  const extra = total % partitions;
  return Array.from({ length: partitions }, (_, i) => Math.max(1, base + (i < extra ? 1 : 0)));
}
