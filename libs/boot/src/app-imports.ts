import type { DynamicModule } from '@nestjs/common';
import { TypeOrmModule } from '@nestjs/typeorm';
import { dataSourceOptions, RoleOwner } from '@app/persistence';
import { DatabaseRoleCheckModule } from './database-role-check';
import { retentionModule } from './retention';
import type { BaseConfig } from '@app/platform';
import { loggingModule } from '@app/platform/logging';
import { OpsModule } from '@app/platform/ops.module';

/**
 * What every app imports: redacting logs, Postgres (and the check of who it connects as), /health +
 * /metrics, and its retention pass.
 */
export function appImports(app: Exclude<RoleOwner, 'cli'>, base: BaseConfig, dbPoolSize: number): DynamicModule[] {
  return [
    loggingModule(app, base.logLevel, base.replica),
    // retryAttempts 0: a Postgres that is down at boot fails the boot loudly instead of hanging;
    // once running, the pool reconnects by itself when Postgres returns.
    TypeOrmModule.forRoot({ ...dataSourceOptions(base, dbPoolSize), retryAttempts: 0 }),
    DatabaseRoleCheckModule.forRoot(app, base),
    OpsModule.forRoot({ app, redis: base.redis }),
    ...retentionModule(app, base),
  ];
}
