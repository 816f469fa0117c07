import { DynamicModule, Module } from '@nestjs/common';
import { getDataSourceToken } from '@nestjs/typeorm';
import { lastValueFrom } from 'rxjs';
import { DataSource } from 'typeorm';
import { queueOn, TypedClient, withJobId } from '@app/messaging';
import { connectRedis } from '@app/platform';
import { OperationsRepository, OutboxRelay, RebillsRepository, TransactionsRepository } from '@app/persistence';
import { appImports, queueClient } from '@app/boot';
import { ACQUIRER_CONNECTOR, PostgresSandboxCallLog, SandboxAcquirer } from '@app/acquirer';
import { TokenizerConfig } from './config/tokenizer.config';
import { PaymentsHandler } from './payments/payments.handler';
import { OperationClaimsReconciler } from './payments/operation-claims.reconciler';
import { PaymentsService } from './payments/payments.service';
import { AUTHORIZE_QUEUE, PendingSalesReconciler } from './payments/pending-sales.reconciler';
import { REBILL_CLIENT, RebillScheduler } from './payments/rebill.scheduler';
import { Queue } from 'bullmq';
import { EventName, EventPayloadOf, Patterns } from '@app/contracts';
import { TokenCardsRepository } from '@app/vault-store';
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
        OperationsRepository,
        PaymentsService,
        PendingSalesReconciler,
        OperationClaimsReconciler,
        RebillsRepository,
        RebillScheduler,
        // The scheduler sends each due charge on the queue as any card.authorize.
        { provide: REBILL_CLIENT, useExisting: EVENTS_CLIENT },
        {
          // Read-only use (does a job exist?); errors are the reconciler's to retry, not a crash.
          provide: AUTHORIZE_QUEUE,
          useFactory: () =>
            new Queue(
              Patterns.CardAuthorize,
              queueOn(
                connectRedis(config.base.redis, { maxRetriesPerRequest: 1 }).on('error', () => undefined),
                config.base.queuePrefix,
                Patterns.CardAuthorize,
              ),
            ).on('error', () => undefined),
        },
        PostgresSandboxCallLog,
        {
          // In this (test) environment every acquirer code is served by the sandbox.
          provide: ACQUIRER_CONNECTOR,
          inject: [PostgresSandboxCallLog],
          useFactory: (log: PostgresSandboxCallLog) =>
            new SandboxAcquirer(log, { slowApprovalMs: config.sandboxSlowApprovalMs, followUpLatencyMs: config.sandboxFollowUpLatencyMs }),
        },
        {
          provide: EVENTS_CLIENT,
          useFactory: () => new TypedClient(queueClient(config.base)),
        },
        {
          provide: OutboxRelay,
          inject: [getDataSourceToken(), EVENTS_CLIENT],
          // Outbox rows hold events as the payments service built them from the catalogue's types.
          useFactory: (db: DataSource, events: TypedClient) =>
            new OutboxRelay(
              db,
              (event, id, payload) =>
                lastValueFrom(events.emit(event as EventName, withJobId(payload as EventPayloadOf<EventName>, `outbox-${id}`)), {
                  defaultValue: undefined,
                }),
              {
                intervalMs: config.outboxIntervalMs,
                pokeDelayMs: config.outboxPokeDelayMs,
                batchSize: 100,
              },
            ),
        },
      ],
    };
  }
}
