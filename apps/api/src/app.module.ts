import { DynamicModule, Module } from '@nestjs/common';
import { APP_FILTER } from '@nestjs/core';
import { appImports } from '@app/boot';
import { ApiConfig } from './config/api.config';
import { AcquirerRoutingService } from './receiver/acquirer-routing.service';
import { MerchantAuthService } from './auth/merchant-auth.service';
import { AuthLimits, EdgeLimitsConfig, HttpExceptionFilter, RateLimitService } from '@app/http';
import { gatewayClientProvider } from './messaging/gateway-client.provider';
import { TokensController } from './tokens/tokens.controller';
import { TokensService } from './tokens/tokens.service';
import {
  AuditEventsRepository,
  AcquirerAccountsRepository,
  FeePlansRepository,
  IdempotencyKeysRepository,
  LedgerRepository,
  MerchantsRepository,
  RecipientsRepository,
  TokenFactsRepository,
  TransactionsRepository,
  RebillsRepository,
} from '@app/persistence';
import { AuditTrail } from '@app/operators';
import { RebillLifecycle } from '@app/rebills';
import { IdempotencyService } from './idempotency/idempotency.service';
import { ReceiverController } from './receiver/receiver.controller';
import { ReceiverService } from './receiver/receiver.service';
import { RebillService } from './receiver/rebill.service';
import { SaleTermsService } from './split/sale-terms.service';

@Module({})
export class AppModule {
  static forRoot(config: ApiConfig): DynamicModule {
    return {
      module: AppModule,
      imports: appImports('api', config.base, config.dbPoolSize),
      controllers: [TokensController, ReceiverController],
      providers: [
        { provide: ApiConfig, useValue: config },
        { provide: EdgeLimitsConfig, useExisting: ApiConfig },
        MerchantsRepository,
        AcquirerAccountsRepository,
        AcquirerRoutingService,
        MerchantAuthService,
        RateLimitService,
        AuthLimits,
        TokensService,
        TokenFactsRepository,
        ReceiverService,
        RebillService,
        RebillsRepository,
        RebillLifecycle,
        IdempotencyService,
        IdempotencyKeysRepository,
        TransactionsRepository,
        RecipientsRepository,
        FeePlansRepository,
        LedgerRepository,
        SaleTermsService,
        AuditEventsRepository,
        AuditTrail,
        gatewayClientProvider,
        { provide: APP_FILTER, useClass: HttpExceptionFilter },
      ],
    };
  }
}
