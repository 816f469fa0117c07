import { Inject, Injectable, OnApplicationShutdown } from '@nestjs/common';
import { HealthIndicatorService } from '@nestjs/terminus';
import type { RedisTarget } from './env';
import { connectRedis, isCluster, type RedisConnection } from './redis';

export const OPS_REDIS = Symbol('OPS_REDIS');

/**
 * Pings Redis on its own connection so a blocked worker connection can't fake a healthy one. On a
 * Redis Cluster it pings every master (a PING through the cluster client reaches just one node)
 * and asks for the cluster's own verdict, so one master down is "down" here as one server down is.
 */
@Injectable()
export class RedisHealthIndicator implements OnApplicationShutdown {
  private readonly redis: RedisConnection;

  constructor(
    @Inject(OPS_REDIS) target: RedisTarget,
    private readonly health: HealthIndicatorService,
  ) {
    // Fail fast while Redis is down: /health must answer "down" at once, not hang.
    this.redis = connectRedis(target, { lazyConnect: true, maxRetriesPerRequest: 1, enableOfflineQueue: false, connectTimeout: 1000 });
    this.redis.on('error', () => undefined);
    this.redis.connect().catch(() => undefined);
  }

  async isHealthy(key: 'redis') {
    const session = this.health.check(key);
    try {
      await withTimeout(this.check(), 1000);
      return session.up();
    } catch (e) {
      return session.down({ message: (e as Error).message });
    }
  }

  private async check(): Promise<void> {
    if (!isCluster(this.redis)) {
      await this.redis.ping();
      return;
    }
    const masters = this.redis.nodes('master');
    if (this.redis.status !== 'ready' || masters.length === 0) throw new Error(`the cluster connection is ${this.redis.status}`);
    const [info, slots] = await Promise.all([masters[0].cluster('INFO'), masters[0].cluster('SLOTS'), ...masters.map((m) => m.ping())]);
    const state = /cluster_state:(\w+)/.exec(String(info))?.[1];
    if (state !== 'ok') throw new Error(`cluster_state is ${state ?? 'unknown'}`);
    // The client drops a master whose connection ended, while the cluster itself only marks it
    // failed after cluster-node-timeout: a master that owns slots and that the client has no
    // connection to is down now, whatever cluster_state says yet.
    const reachable = new Set(masters.map((m) => `${m.options.host}:${m.options.port}`));
    for (const [, , owner] of slots) {
      if (owner && !reachable.has(`${owner[0]}:${owner[1]}`)) throw new Error(`master ${owner[0]}:${owner[1]} does not answer`);
    }
  }

  onApplicationShutdown(): void {
    this.redis.disconnect();
  }
}

async function withTimeout<T>(p: Promise<T>, ms: number): Promise<T> {
  let t: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    t = setTimeout(() => reject(new Error(`no answer within ${ms} ms`)), ms);
  });
  try {
    return await Promise.race([p, timeout]);
  } finally {
    clearTimeout(t);
  }
}
