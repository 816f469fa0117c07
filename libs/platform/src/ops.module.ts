import { Controller, DynamicModule, Get, Header, Module } from '@nestjs/common';
import { ApiExcludeController } from '@nestjs/swagger';
import { HealthCheck, HealthCheckService, TerminusModule, TypeOrmHealthIndicator } from '@nestjs/terminus';
import { register, collectDefaultMetrics, Gauge } from 'prom-client';
import type { RedisTarget } from './env';
import { OPS_REDIS, RedisHealthIndicator } from './redis-health';
import { startPauseMonitors } from './pauses';
import { DependencyProbe } from './dependency-metrics';

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

/**
 * 200 while the process can answer at all: what a liveness probe should ask. Unlike /health it
 * does not look at Postgres or Redis, so an outage of either takes replicas out of service
 * (readiness) without restarting every one of them at once (liveness).
 */
@ApiExcludeController()
@Controller()
class LiveController {
  @Get('live')
  live(): { status: 'ok' } {
    return { status: 'ok' };
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

/** /health, /live and /metrics (with dependency_up), the same on every app (the workers serve them on HEALTH_PORT). */
@Module({})
export class OpsModule {
  static forRoot(opts: { app: string; redis: RedisTarget }): DynamicModule {
    if (!defaultMetricsStarted) {
      register.setDefaultLabels({ app: opts.app });
      collectDefaultMetrics();
      startPauseMonitors();
      // Set by `npm start`, which restarts a replica that dies; another supervisor has its own count.
      new Gauge({
        name: 'launcher_restarts',
        help: 'How many times the launcher (npm start) restarted this replica after it died (LAUNCHER_RESTARTS)',
      }).set(Number(process.env.LAUNCHER_RESTARTS) || 0);
      defaultMetricsStarted = true;
    }
    return {
      module: OpsModule,
      imports: [TerminusModule.forRoot({ logger: false, errorLogStyle: 'json' })],
      controllers: [HealthController, LiveController, MetricsController],
      providers: [{ provide: OPS_REDIS, useValue: opts.redis }, RedisHealthIndicator, DependencyProbe],
    };
  }
}
