import type { TypeOrmHealthIndicator } from '@nestjs/terminus';
import { register } from 'prom-client';
import { DependencyProbe } from './dependency-metrics';
import type { RedisHealthIndicator } from './redis-health';

/** Health indicators that answer as /health's would: up, down, or (a bug) throwing. */
function probe(postgres: 'up' | 'down' | 'throws', redis: 'up' | 'down') {
  const db = {
    pingCheck: () => (postgres === 'throws' ? Promise.reject(new Error('boom')) : Promise.resolve({ postgres: { status: postgres } })),
  } as unknown as TypeOrmHealthIndicator;
  const r = { isHealthy: () => Promise.resolve({ redis: { status: redis } }) } as unknown as RedisHealthIndicator;
  new DependencyProbe(db, r).onModuleInit();
}

describe('dependency_up', () => {
  it("is 1 for each dependency that answered /health's check on this scrape, 0 for one that did not", async () => {
    probe('up', 'down');
    expect(await register.getSingleMetricAsString('dependency_up')).toMatch(
      /dependency_up\{dependency="postgres"\} 1\ndependency_up\{dependency="redis"\} 0/,
    );
    probe('throws', 'up');
    expect(await register.getSingleMetricAsString('dependency_up')).toMatch(
      /dependency_up\{dependency="postgres"\} 0\ndependency_up\{dependency="redis"\} 1/,
    );
  });
});
