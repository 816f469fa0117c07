import { Cluster } from 'ioredis';
import { ConfigError, EnvReader, readBaseConfig, readRedisTarget } from './env';
import { connectRedis, isCluster } from './redis';

const target = (env: NodeJS.ProcessEnv) => {
  const r = new EnvReader(env);
  const t = readRedisTarget(r);
  r.done('test');
  return t;
};

describe('REDIS_CLUSTER_NODES', () => {
  it('is optional: without it the apps use the one server of REDIS_URL', () => {
    expect(target({ REDIS_URL: 'redis://r1:6380' })).toEqual({ url: 'redis://r1:6380' });
    expect(target({ REDIS_URL: 'redis://r1:6380', REDIS_CLUSTER_NODES: '' })).toEqual({ url: 'redis://r1:6380' });
  });

  it('lists host:port pairs, spaces and IPv6 brackets allowed', () => {
    expect(target({ REDIS_CLUSTER_NODES: 'r1:7000, 10.0.0.2:7001,[::1]:7002' }).clusterNodes).toEqual([
      { host: 'r1', port: 7000 },
      { host: '10.0.0.2', port: 7001 },
      { host: '::1', port: 7002 },
    ]);
  });

  it.each(['r1', 'r1:0', 'r1:70000', 'redis://r1:7000', 'r1:7000;r2:7001', ','])('refuses "%s", naming the variable', (spec) => {
    expect(() => target({ REDIS_CLUSTER_NODES: spec })).toThrow(ConfigError);
    expect(() => target({ REDIS_CLUSTER_NODES: spec })).toThrow(/REDIS_CLUSTER_NODES/);
  });

  it('refuses a database number in REDIS_URL: a cluster has only database 0', () => {
    expect(() => target({ REDIS_URL: 'redis://h:1/3', REDIS_CLUSTER_NODES: 'r1:7000' })).toThrow(/REDIS_URL names database 3/);
    expect(target({ REDIS_URL: 'redis://h:1/0', REDIS_CLUSTER_NODES: 'r1:7000' }).clusterNodes).toHaveLength(1);
  });

  it('is part of every app’s base configuration', () => {
    expect(readBaseConfig(new EnvReader({ REDIS_CLUSTER_NODES: 'r1:7000' })).redis.clusterNodes).toEqual([{ host: 'r1', port: 7000 }]);
  });
});

describe('connectRedis', () => {
  it('makes a Cluster with the URL’s credentials and TLS when cluster nodes are given, else a Redis', () => {
    const cluster = connectRedis(
      { url: 'rediss://app:s%40cret@ignored:1', clusterNodes: [{ host: '127.0.0.1', port: 1 }] },
      { lazyConnect: true, maxRetriesPerRequest: null, enableOfflineQueue: false },
    );
    const single = connectRedis({ url: 'redis://127.0.0.1:1/2' }, { lazyConnect: true, maxRetriesPerRequest: 1 });
    try {
      expect(cluster).toBeInstanceOf(Cluster);
      expect(isCluster(cluster) && cluster.options.redisOptions).toMatchObject({
        username: 'app',
        password: 's@cret',
        tls: {},
        maxRetriesPerRequest: null,
      });
      expect(isCluster(cluster) && cluster.options.enableOfflineQueue).toBe(false);
      expect(isCluster(single)).toBe(false);
      expect(!isCluster(single) && single.options).toMatchObject({ host: '127.0.0.1', port: 1, db: 2, maxRetriesPerRequest: 1 });
    } finally {
      cluster.disconnect();
      single.disconnect();
    }
  });
});
