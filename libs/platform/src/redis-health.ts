import { Inject, Injectable, OnApplicationShutdown } from '@nestjs/common';
import { HealthIndicatorService } from '@nestjs/terminus';
import Redis from 'ioredis';

export const OPS_REDIS_URL = Symbol('OPS_REDIS_URL');

/** Pings Redis on its own connection so a blocked worker connection can't fake a healthy one. */
@Injectable()
export class RedisHealthIndicator implements OnApplicationShutdown {
  private readonly redis: Redis;

  constructor(
    @Inject(OPS_REDIS_URL) url: string,
    private readonly health: HealthIndicatorService,
  ) {
    // Fail fast while Redis is down: /health must answer "down" at once, not hang.
    this.redis = new Redis(url, { lazyConnect: true, maxRetriesPerRequest: 1, enableOfflineQueue: false, connectTimeout: 1000 });
    this.redis.on('error', () => undefined);
    this.redis.connect().catch(() => undefined);
  }

  async isHealthy(key: 'redis') {
    const session = this.health.check(key);
    try {
      await withTimeout(this.redis.ping(), 1000);
      return session.up();
    } catch (e) {
      return session.down({ message: (e as Error).message });
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
