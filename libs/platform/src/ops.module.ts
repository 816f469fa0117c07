import { Controller, DynamicModule, Get, Header, Module } from '@nestjs/common';
import { ApiExcludeController } from '@nestjs/swagger';
import { HealthCheck, HealthCheckService, TerminusModule, TypeOrmHealthIndicator } from '@nestjs/terminus';
import { register, collectDefaultMetrics } from 'prom-client';
import type { RedisTarget } from './env';
import { OPS_REDIS, RedisHealthIndicator } from './redis-health';
import { startPauseMonitors } from './pauses';

@ApiExcludeController()
@Controller()
class HealthController {
  constructor(
    private readonly health: HealthCheckService,
    private readonly db: TypeOrmHealthIndicator,
    private readonly redis: RedisHealthIndicator,
  ) {}

  /** 200 when Postgres and Redis answer, 503 naming the one that does not. */
  @Get('health')
  @HealthCheck()
  check() {
    return this.health.check([() => this.db.pingCheck('postgres', { timeout: 1000 }), () => this.redis.isHealthy('redis')]);
  }
}

@ApiExcludeController()
@Controller()
class MetricsController {
  @Get('metrics')
  @Header('Content-Type', register.contentType)
  metrics(): Promise<string> {
    return register.metrics();
  }
}

let defaultMetricsStarted = false;

/** /health and /metrics, the same on every app (the workers serve them on HEALTH_PORT). */
@Module({})
export class OpsModule {
  static forRoot(opts: { app: string; redis: RedisTarget }): DynamicModule {
    if (!defaultMetricsStarted) {
      register.setDefaultLabels({ app: opts.app });
      collectDefaultMetrics();
      startPauseMonitors();
      defaultMetricsStarted = true;
    }
    return {
      module: OpsModule,
      imports: [TerminusModule.forRoot({ logger: false, errorLogStyle: 'json' })],
      controllers: [HealthController, MetricsController],
      providers: [{ provide: OPS_REDIS, useValue: opts.redis }, RedisHealthIndicator],
    };
  }
}
