import { type DynamicModule, Module } from '@nestjs/common';
import { getDataSourceToken } from '@nestjs/typeorm';
import type { DataSource } from 'typeorm';
import { RetentionRepository, type RoleOwner } from '@app/persistence';
import { RETENTION_OWNERS, RetentionPruner } from '@app/retention';
import type { BaseConfig } from '@app/platform';

@Module({})
class RetentionModule {}

/**
 * The app's retention pass (docs/operations/retention.md): the rules of the tables it owns, run
 * at boot and every RETENTION_INTERVAL under its own role; none for an app that owns no rule.
 */
export function retentionModule(app: RoleOwner, base: BaseConfig): DynamicModule[] {
  if (!Object.values(RETENTION_OWNERS).includes(app)) return [];
  return [
    {
      module: RetentionModule,
      providers: [
        {
          provide: RetentionPruner,
          inject: [getDataSourceToken()],
          useFactory: (db: DataSource) => RetentionPruner.of(app, new RetentionRepository(db), base.retention),
        },
      ],
      exports: [RetentionPruner],
    },
  ];
}
