import { Module, OnApplicationShutdown } from '@nestjs/common';
import { DiscoveryModule } from '@nestjs/core';
import { DataSource } from 'typeorm';
import { PostgresSandboxCallLog } from '@app/acquirer/sandbox-call-log';
import { AcquirerRouterRef } from './acquirer/acquirer-router.ref';
import { MerchantRemoveAcquirerCommand, MerchantSetAcquirerCommand, MerchantShowCommand } from './merchants/acquirer-account.commands';
import {
  AuditEventsRepository,
  databaseIdentity,
  dataSourceOptions,
  DeliveriesRepository,
  identityProblem,
  ListenersRepository,
  OperatorsRepository,
  FeePlansRepository,
  PortalLinksRepository,
  LedgerRepository,
  MerchantsRepository,
  AcquirerAccountsRepository,
  RecipientsRepository,
  RebillsRepository,
  RecoveriesRepository,
  TransactionsRepository,
} from '@app/persistence';
import { AuditTrail } from '@app/operators';
import { RebillListCommand, RebillRunDueCommand, RebillShowCommand } from './rebills/rebill.commands';
import { RebillLifecycle } from '@app/rebills';
import { TokenCardKeysRepository } from '@app/vault-store';
import { CaptureSettlement, ChargebackSettlement, VerifyLedger } from '@app/settlement';
import { AcquirerReconcileCommand, AcquirerVoidOrphanCommand } from './acquirer/acquirer.commands';
import {
  DeliveryQueueRef,
  MerchantRotateWebhookSecretCommand,
  RecoveryQueueRef,
  WebhooksListCommand,
  WebhooksRecoverCancelCommand,
  WebhooksReplayCommand,
} from './webhooks/webhook.commands';
import { ListenerDisableCommand, ListenerEnableCommand, ListenerListCommand } from './webhooks/listener.commands';
import { CliConfig, loadCliConfig } from './config/cli.config';
import { MerchantCreateCommand, MerchantRotateKeyCommand } from './merchants/merchant.commands';
import { MerchantSetLimitsCommand } from './merchants/merchant-limits.command';
import { MerchantSetWebhookThrottleCommand } from './merchants/webhook-throttle.command';
import { MerchantPortalLinkCommand, MerchantPortalRevokeCommand } from './merchants/portal.commands';
import { FeesSetCommand, FeesShowCommand } from './split/fee.commands';
import { ChargebackRecordCommand, LedgerVerifyCommand, PayablesListCommand } from './split/ledger.commands';
import { RecipientApproveCommand, RecipientCreateCommand, RecipientListCommand } from './split/recipient.commands';
import { VaultRefingerprintCommand, VaultRotateKeyCommand } from './vault/vault.commands';
import { RefingerprintService } from './vault/refingerprint.service';
import { VaultRotationService } from './vault/vault-rotation.service';
import { AuditListCommand } from './operators/audit.commands';
import { CommandGate } from './operators/command-gate';
import { OperatorCreateCommand, OperatorListCommand, OperatorRevokeCommand } from './operators/operator.commands';
import { OperatorSession } from './operators/operator-session';
import { SecretsRotateKeyCommand, SecretsRotation } from './secrets/secrets.commands';
import { RetentionRunCommand } from './retention/retention.commands';

@Module({
  imports: [DiscoveryModule],
  providers: [
    // Every command below runs through the gate: an operator's token, its role, the audit trail.
    OperatorsRepository,
    AuditEventsRepository,
    AuditTrail,
    OperatorSession,
    CommandGate,
    OperatorCreateCommand,
    OperatorRevokeCommand,
    OperatorListCommand,
    AuditListCommand,
    { provide: CliConfig, useFactory: () => loadCliConfig() },
    {
      provide: DataSource,
      inject: [CliConfig],
      useFactory: async (cfg: CliConfig) => {
        const db = await new DataSource(dataSourceOptions(cfg.base, 2)).initialize();
        // The commands run as gateway_operator on the admin app, or as gateway_breakglass where that
        // login is; as a superuser or the tables' owner only outside production.
        const identity = await databaseIdentity(db);
        const problem = identityProblem(identity, 'admin') && identityProblem(identity, 'cli');
        if (problem && cfg.base.nodeEnv === 'production') {
          await db.destroy();
          throw new Error(problem);
        }
        if (problem) process.stderr.write(JSON.stringify({ warning: `${problem}; allowed outside production` }) + '\n');
        return db;
      },
    },
    MerchantsRepository,
    AcquirerAccountsRepository,
    MerchantCreateCommand,
    MerchantSetAcquirerCommand,
    MerchantRemoveAcquirerCommand,
    MerchantShowCommand,
    MerchantRotateKeyCommand,
    MerchantSetLimitsCommand,
    MerchantSetWebhookThrottleCommand,
    PortalLinksRepository,
    MerchantPortalLinkCommand,
    MerchantPortalRevokeCommand,
    TokenCardKeysRepository,
    VaultRotateKeyCommand,
    VaultRotationService,
    SecretsRotation,
    SecretsRotateKeyCommand,
    VaultRefingerprintCommand,
    RefingerprintService,
    RecipientsRepository,
    FeePlansRepository,
    LedgerRepository,
    CaptureSettlement,
    ChargebackSettlement,
    VerifyLedger,
    RecipientCreateCommand,
    RecipientApproveCommand,
    RecipientListCommand,
    FeesSetCommand,
    FeesShowCommand,
    PayablesListCommand,
    ChargebackRecordCommand,
    LedgerVerifyCommand,
    TransactionsRepository,
    PostgresSandboxCallLog,
    // acquirer:reconcile asks each transaction's acquirer, through its merchant's account.
    AcquirerRouterRef,
    AcquirerReconcileCommand,
    AcquirerVoidOrphanCommand,
    DeliveriesRepository,
    { provide: DeliveryQueueRef, inject: [CliConfig], useFactory: (cfg: CliConfig) => new DeliveryQueueRef(cfg) },
    WebhooksListCommand,
    WebhooksReplayCommand,
    RecoveriesRepository,
    { provide: RecoveryQueueRef, inject: [CliConfig], useFactory: (cfg: CliConfig) => new RecoveryQueueRef(cfg) },
    WebhooksRecoverCancelCommand,
    MerchantRotateWebhookSecretCommand,
    ListenersRepository,
    ListenerListCommand,
    ListenerDisableCommand,
    ListenerEnableCommand,
    RetentionRunCommand,
    RebillsRepository,
    RebillLifecycle,
    RebillListCommand,
    RebillShowCommand,
    RebillRunDueCommand,
  ],
})
export class CliModule implements OnApplicationShutdown {
  constructor(
    private readonly db: DataSource,
    private readonly queue: DeliveryQueueRef,
    private readonly recoveryQueue: RecoveryQueueRef,
  ) {}

  async onApplicationShutdown(): Promise<void> {
    await this.queue.close();
    await this.recoveryQueue.close();
    if (this.db.isInitialized) await this.db.destroy();
  }
}
