import { DynamicModule, Module } from '@nestjs/common';
import { getDataSourceToken } from '@nestjs/typeorm';
import { lastValueFrom } from 'rxjs';
import { DataSource } from 'typeorm';
import { BullMqClient, withJobId } from '@app/messaging';
import { OutboxRelay, TransactionsRepository } from '@app/persistence';
import { appImports, queueClient } from '@app/platform';
import { ACQUIRER_CONNECTOR } from './acquirer/acquirer.connector';
import { SandboxAcquirer } from './acquirer/sandbox-acquirer';
import { PostgresSandboxCallLog } from './acquirer/sandbox-call-log';
import { TokenizerConfig } from './config/tokenizer.config';
import { PaymentsHandler } from './payments/payments.handler';
import { PaymentsService } from './payments/payments.service';
import { TokenCardsRepository } from './tokens/token-cards.repository';
import { TokensHandler } from './tokens/tokens.handler';
import { TokensService } from './tokens/tokens.service';

const EVENTS_CLIENT = Symbol('EVENTS_CLIENT');

@Module({})
export class TokenizerModule {
  static forRoot(config: TokenizerConfig): DynamicModule {
    return {
      module: TokenizerModule,
      imports: appImports('tokenizer', config.base, config.dbPoolSize),
      controllers: [TokensHandler, PaymentsHandler],
      providers: [
        { provide: TokenizerConfig, useValue: config },
        TokenCardsRepository,
        TokensService,
        TransactionsRepository,
        PaymentsService,
        PostgresSandboxCallLog,
        {
          // In this (test) environment every acquirer code is served by the sandbox.
          provide: ACQUIRER_CONNECTOR,
          inject: [PostgresSandboxCallLog],
          useFactory: (log: PostgresSandboxCallLog) => new SandboxAcquirer(log, { slowApprovalMs: config.sandboxSlowApprovalMs }),
        },
        {
          provide: EVENTS_CLIENT,
          useFactory: () => queueClient(config.base),
        },
        {
          provide: OutboxRelay,
          inject: [getDataSourceToken(), EVENTS_CLIENT],
          useFactory: (db: DataSource, events: BullMqClient) =>
            new OutboxRelay(db, (event, id, payload) => lastValueFrom(events.emit(event, withJobId(payload as object, `outbox-${id}`)), { defaultValue: undefined }), {
              intervalMs: config.outboxIntervalMs,
              batchSize: 100,
            }),
        },
      ],
    };
  }
}
