import { Injectable, OnModuleInit } from '@nestjs/common';
import { TypeOrmHealthIndicator } from '@nestjs/terminus';
import { Gauge } from 'prom-client';
import { RedisHealthIndicator } from './redis-health';

type Dependency = 'postgres' | 'redis';

/** The check each scrape runs (set once the app's health indicators exist). */
let probe: (() => Promise<Record<Dependency, boolean>>) | undefined;

/**
 * dependency_up{dependency}: 1 when the dependency answered the same check /health makes (a
 * Postgres `SELECT 1`, a Redis PING on the health connection; each gives up after 1 s), 0 when it
 * did not. Read on every scrape, so an app whose Postgres or Redis is down still answers /metrics
 * (Prometheus's `up` stays 1) and says which one is down.
 */
export const dependencyUp = new Gauge({
  name: 'dependency_up',
  help: "1 when the dependency (postgres, redis) answered this scrape's health check within 1 s, else 0",
  labelNames: ['dependency'],
  async collect() {
    if (!probe) return;
    const up = await probe();
    for (const [dependency, ok] of Object.entries(up)) this.set({ dependency }, ok ? 1 : 0);
  },
});

/** Points dependency_up at the app's health indicators (OpsModule provides it with them). */
@Injectable()
export class DependencyProbe implements OnModuleInit {
  constructor(
    private readonly db: TypeOrmHealthIndicator,
    private readonly redis: RedisHealthIndicator,
  ) {}

  onModuleInit(): void {
    probe = async () => {
      const [postgres, redis] = await Promise.all([
        this.db.pingCheck('postgres', { timeout: 1000 }).then(
          (r) => r.postgres?.status === 'up',
          () => false,
        ),
        this.redis.isHealthy('redis').then(
          (r) => r.redis?.status === 'up',
          () => false,
        ),
      ]);
      return { postgres, redis };
    };
  }
}
