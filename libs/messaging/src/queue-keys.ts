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
