// Relative paths: the global teardown uses this too, and jest loads it without the module mapping.
import { EnvReader, readRedisTarget, type RedisTarget } from '../../libs/platform/src/env';
import { connectRedis, type RedisConnection, type RedisUse } from '../../libs/platform/src/redis';

/** The run's Redis as the apps read it (REDIS_URL, or REDIS_CLUSTER_NODES when the run is on a cluster). */
export function testRedisTarget(env: NodeJS.ProcessEnv = process.env): RedisTarget {
  const r = new EnvReader(env);
  const target = readRedisTarget(r);
  r.done('test');
  return target;
}

/** A connection to the run's Redis, one server or a cluster, made the way the apps make theirs. */
export function testRedis(use: RedisUse = {}): RedisConnection {
  return connectRedis(testRedisTarget(), use);
}
