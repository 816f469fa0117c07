import { DynamicModule, Module } from '@nestjs/common';
import { APP_FILTER } from '@nestjs/core';
import { appImports } from '@app/boot';
import { ApiConfig } from './config/api.config';
import { MerchantAuthService } from './auth/merchant-auth.service';
import { HttpExceptionFilter } from './errors/http-exception.filter';
import { gatewayClientProvider } from './messaging/gateway-client.provider';
import { TokensController } from './tokens/tokens.controller';
import { TokensService } from './tokens/tokens.service';
import {
  AuditTrail,
  ConsoleSessionsRepository,
  DeliveriesRepository,
  DeliveryConsoleRepository,
  ListenersRepository,
  FeePlansRepository,
  IdempotencyKeysRepository,
  OperatorsRepository,
  PortalLinksRepository,
  LedgerRepository,
  MerchantsRepository,
  RecipientsRepository,
  RecoveriesRepository,
  TokenFactsRepository,
  TransactionsRepository,
  RebillsRepository,
} from '@app/persistence';
import { AdminController } from './admin/admin.controller';
import { AdminQueues } from './admin/admin-queues';
import { IdempotencyService } from './idempotency/idempotency.service';
import { ReceiverController } from './receiver/receiver.controller';
import { ReceiverService } from './receiver/receiver.service';
import { RebillService } from './receiver/rebill.service';
import { SaleTermsService } from './split/sale-terms.service';
import { RateLimitService } from './rate-limit/rate-limit.service';
import { AuthLimits } from './rate-limit/auth-limits.service';

@Module({})
export class AppModule {
  static forRoot(config: ApiConfig): DynamicModule {
    return {
      module: AppModule,
      imports: appImports('api', config.base, config.dbPoolSize),
      controllers: [TokensController, ReceiverController, AdminController],
      providers: [
        { provide: ApiConfig, useValue: config },
        MerchantsRepository,
        MerchantAuthService,
        RateLimitService,
        AuthLimits,
        TokensService,
        TokenFactsRepository,
        ReceiverService,
        RebillService,
        RebillsRepository,
        IdempotencyService,
        IdempotencyKeysRepository,
        TransactionsRepository,
        RecipientsRepository,
        FeePlansRepository,
        LedgerRepository,
        SaleTermsService,
        DeliveriesRepository,
        DeliveryConsoleRepository,
        RecoveriesRepository,
        ListenersRepository,
        OperatorsRepository,
        ConsoleSessionsRepository,
        PortalLinksRepository,
        AuditTrail,
        { provide: AdminQueues, useFactory: () => new AdminQueues(config.base.redis, config.base.queuePrefix) },
        gatewayClientProvider,
        { provide: APP_FILTER, useClass: HttpExceptionFilter },
      ],
    };
  }
}
