import { DynamicModule, Module } from '@nestjs/common';
import { APP_FILTER } from '@nestjs/core';
import { appImports } from '@app/boot';
import { AuthLimits, EdgeLimitsConfig, HttpExceptionFilter, RateLimitService } from '@app/http';
import {
  AuditEventsRepository,
  ConsoleSessionsRepository,
  DeliveriesRepository,
  DeliveryConsoleRepository,
  ListenersRepository,
  MerchantsRepository,
  OperatorsRepository,
  PortalLinksRepository,
  RebillsRepository,
  RecoveriesRepository,
} from '@app/persistence';
import { AuditTrail } from '@app/operators';
import { AdminController } from './admin/admin.controller';
import { AdminEventsController } from './admin/admin-events.controller';
import { AdminQueues } from './admin/admin-queues';
import { ConsoleConfig } from './config/console.config';

/** The operators' console (/console), the merchants' portal (/portal) and /admin, with their own database role. */
@Module({})
export class ConsoleModule {
  static forRoot(config: ConsoleConfig): DynamicModule {
    return {
      module: ConsoleModule,
      imports: appImports('console', config.base, config.dbPoolSize),
      controllers: [AdminController, AdminEventsController],
      providers: [
        { provide: ConsoleConfig, useValue: config },
        { provide: EdgeLimitsConfig, useExisting: ConsoleConfig },
        RateLimitService,
        AuthLimits,
        MerchantsRepository,
        DeliveriesRepository,
        DeliveryConsoleRepository,
        RecoveriesRepository,
        ListenersRepository,
        OperatorsRepository,
        ConsoleSessionsRepository,
        PortalLinksRepository,
        RebillsRepository,
        AuditEventsRepository,
        AuditTrail,
        {
          provide: AdminQueues,
          useFactory: () => new AdminQueues(config.base.redis, config.base.queuePrefix, config.base.queuePartitions),
        },
        { provide: APP_FILTER, useClass: HttpExceptionFilter },
      ],
    };
  }
}
