import Redis, { Cluster, type RedisOptions } from 'ioredis';
import type { RedisTarget } from './env';

/** A connection made by `connectRedis`: one server or a cluster, used the same way. */
export type RedisConnection = Redis | Cluster;

/** How a use of Redis wants its connection to behave (the same on one server and on a cluster). */
export interface RedisUse {
  /** false: a command while disconnected fails at once instead of waiting for the connection. */
  enableOfflineQueue?: boolean;
  /** null: retry forever (what BullMQ workers need); a number: fail the command after that many. */
  maxRetriesPerRequest?: number | null;
  lazyConnect?: boolean;
  connectTimeout?: number;
  commandTimeout?: number;
  enableAutoPipelining?: boolean;
  /** Reconnect delay; returning null stops reconnecting. */
  retryStrategy?: (times: number) => number | null;
}

/** ioredis options from a redis:// or rediss:// URL. */
export function redisOptionsFromUrl(url: string): RedisOptions {
  const u = new URL(url);
  const db = u.pathname && u.pathname !== '/' ? Number(u.pathname.slice(1)) : 0;
  return {
    host: u.hostname.replace(/^\[|\]$/g, ''),
    port: u.port ? Number(u.port) : 6379,
    username: u.username ? decodeURIComponent(u.username) : undefined,
    password: u.password ? decodeURIComponent(u.password) : undefined,
    db: Number.isInteger(db) ? db : 0,
    tls: u.protocol === 'rediss:' ? {} : undefined,
  };
}

/**
 * THE way this code base opens Redis: a `Cluster` when the target lists cluster nodes, else a
 * `Redis` on its URL, each with the use's options. Callers add their own 'error' listener.
 */
export function connectRedis(target: RedisTarget, use: RedisUse = {}): RedisConnection {
  const server = redisOptionsFromUrl(target.url);
  if (!target.clusterNodes) return new Redis({ ...server, ...use });
  const { username, password, tls } = server;
  const { enableOfflineQueue, lazyConnect, enableAutoPipelining, retryStrategy, ...perNode } = use;
  return new Cluster(target.clusterNodes, {
    redisOptions: { username, password, tls, ...perNode },
    enableOfflineQueue,
    lazyConnect,
    enableAutoPipelining,
    clusterRetryStrategy: retryStrategy,
    // A node that went away: its slots move (or come back) within a few seconds.
    retryDelayOnFailover: 200,
    retryDelayOnClusterDown: 200,
    // The slot map is read at connect and after a MOVED: ioredis gives each node 1 s by default,
    // which a busy node (or a busy client process at boot, opening many connections) can miss,
    // failing the connect for every node and starting over.
    slotsRefreshTimeout: 5_000,
  });
}

export function isCluster(connection: RedisConnection): connection is Cluster {
  return (connection as Cluster).isCluster === true;
}

/** The servers that hold keys: every master of a cluster, or the one server. */
export function keyHolders(connection: RedisConnection): Redis[] {
  return isCluster(connection) ? connection.nodes('master') : [connection];
}

/**
 * Every key matching `pattern`, from every master of a cluster (SCAN, not KEYS: the Redis may be
 * shared, and KEYS blocks it for everyone). Yields each master's keys with that master, so the
 * caller can read or delete them on the server that holds them.
 */
export async function* scanKeys(connection: RedisConnection, pattern = '*'): AsyncGenerator<{ node: Redis; keys: string[] }> {
  if (isCluster(connection) && connection.status !== 'ready') await clusterReady(connection);
  for (const node of keyHolders(connection)) {
    let cursor = '0';
    do {
      const [next, keys] = await node.scan(cursor, 'MATCH', pattern, 'COUNT', 1000);
      cursor = next;
      if (keys.length) yield { node, keys };
    } while (cursor !== '0');
  }
}

/** Deletes every key matching `pattern` on every master; returns how many it deleted. */
export async function deleteKeys(connection: RedisConnection, pattern: string): Promise<number> {
  let deleted = 0;
  for await (const { node, keys } of scanKeys(connection, pattern)) {
    // One key per UNLINK: a cluster refuses a multi-key command over keys of different slots.
    const results = await node.pipeline(keys.map((k) => ['unlink', k])).exec();
    deleted += (results ?? []).filter(([e, n]) => !e && n === 1).length;
  }
  return deleted;
}

function clusterReady(cluster: Cluster): Promise<void> {
  if (cluster.status === 'wait') return cluster.connect();
  return new Promise((resolve, reject) => {
    cluster.once('ready', resolve);
    cluster.once('end', () => reject(new Error('the cluster connection ended')));
  });
}

/**
 * Closes a connection at shutdown: QUIT, so that commands in flight are answered first, but not
 * waited for past `graceMs` (while Redis is down QUIT never answers, and the process would hang on
 * its way out); the socket is closed either way.
 */
export async function closeRedis(connection: RedisConnection, graceMs = 2_000): Promise<void> {
  let timer: NodeJS.Timeout | undefined;
  await Promise.race([
    connection.quit().catch(() => undefined),
    new Promise((resolve) => {
      timer = setTimeout(resolve, graceMs);
    }),
  ]);
  clearTimeout(timer);
  connection.disconnect();
}

/** BullMQ's own reconnect delay (1 s, growing to 20 s), for connections handed to its workers. */
export const BULLMQ_RECONNECT = (times: number): number => Math.max(Math.min(Math.exp(times), 20_000), 1_000);
