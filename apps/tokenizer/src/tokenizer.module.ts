import { DynamicModule, Module, Provider } from '@nestjs/common';
import { getDataSourceToken } from '@nestjs/typeorm';
import { lastValueFrom } from 'rxjs';
import { DataSource } from 'typeorm';
import { PartitionedQueue, TypedClient, withJobId } from '@app/messaging';
import { connectRedis } from '@app/platform';
import {
  AcquirerAccountsRepository,
  OperationsRepository,
  OutboxRepository,
  RebillsRepository,
  TransactionsRepository,
} from '@app/persistence';
import { OutboxRelay } from '@app/outbox';
import { RebillLifecycle } from '@app/rebills';
import { Logger } from '@nestjs/common';
import { appImports, queueClient } from '@app/boot';
import { accountsSource, AcquirerRouter, createAcquirerRouter, PostgresSandboxCallLog, SandboxAcquirer } from '@app/acquirer';
import { TokenizerConfig } from './config/tokenizer.config';
import { PaymentsHandler } from './payments/payments.handler';
import { OperationClaimsReconciler } from './payments/operation-claims.reconciler';
import { MoneyOperationsService } from './payments/money-operations.service';
import { SalesService } from './payments/sales.service';
import { TransactionChanges } from './payments/transaction-changes';
import { AUTHORIZE_QUEUE, PendingSalesReconciler } from './payments/pending-sales.reconciler';
import { REBILL_CLIENT, RebillScheduler } from './payments/rebill.scheduler';
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
        TransactionChanges,
        SalesService,
        MoneyOperationsService,
        PendingSalesReconciler,
        OperationClaimsReconciler,
        RebillsRepository,
        RebillLifecycle,
        RebillScheduler,
        // The scheduler sends each due charge on the queue as any card.authorize.
        { provide: REBILL_CLIENT, useExisting: EVENTS_CLIENT },
        authorizeQueue(config),
        PostgresSandboxCallLog,
        AcquirerAccountsRepository,
        acquirerRouter(config),
        {
          provide: EVENTS_CLIENT,
          useFactory: () => new TypedClient(queueClient(config.base)),
        },
        outboxRelay(config),
      ],
    };
  }
}

/**
 * The authorize queue, read only (does a job exist?), in as many partitions as the transport cuts
 * it into; errors are the reconciler's to retry, not a crash.
 */
function authorizeQueue(config: TokenizerConfig): Provider {
  return {
    provide: AUTHORIZE_QUEUE,
    useFactory: () =>
      new PartitionedQueue(Patterns.CardAuthorize, {
        connection: connectRedis(config.base.redis, { maxRetriesPerRequest: 1 }).on('error', () => undefined),
        prefix: config.base.queuePrefix,
        partitions: config.base.queuePartitions,
      }),
  };
}

/** Test merchants' sales go to the sandbox, production merchants' to Cielo or e.Rede. */
function acquirerRouter(config: TokenizerConfig): Provider {
  return {
    provide: AcquirerRouter,
    inject: [PostgresSandboxCallLog, AcquirerAccountsRepository],
    useFactory: (log: PostgresSandboxCallLog, accounts: AcquirerAccountsRepository) => {
      const logger = new Logger('AcquirerBreaker');
      return createAcquirerRouter(
        new SandboxAcquirer(log, {
          slowApprovalMs: config.sandboxSlowApprovalMs,
          followUpLatencyMs: config.sandboxFollowUpLatencyMs,
        }),
        config.connectors,
        accountsSource(accounts, config.secrets),
        (acquirer, state) => logger.warn(`${acquirer}: circuit breaker ${state}`),
      );
    },
  };
}

/** Relays the outbox's events onto the queue. */
function outboxRelay(config: TokenizerConfig): Provider {
  return {
    provide: OutboxRelay,
    inject: [getDataSourceToken(), EVENTS_CLIENT],
    // Outbox rows hold events as the sales and money operations services built them from the catalogue's types.
    useFactory: (db: DataSource, events: TypedClient) =>
      new OutboxRelay(
        new OutboxRepository(db),
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
  };
}
