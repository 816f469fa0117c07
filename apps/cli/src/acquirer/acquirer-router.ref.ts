import { Injectable } from '@nestjs/common';
import type { AcquirerRouter } from '@app/acquirer/router';
import { PostgresSandboxCallLog } from '@app/acquirer/sandbox-call-log';
import { SandboxAcquirer } from '@app/acquirer/sandbox-acquirer';
import { EnvReader } from '@app/platform';
import { AcquirerAccountsRepository } from '@app/persistence';
import { CliConfig } from '../config/cli.config';
import { keyringSource } from '../keys/keyrings';

/**
 * The acquirers as acquirer:reconcile and acquirer:void-orphan reach them, built on first use: the
 * connectors load an HTTP client (undici) that no other command needs, and every command pays
 * for what the CLI loads at start.
 */
@Injectable()
export class AcquirerRouterRef {
  private router?: Promise<AcquirerRouter>;

  constructor(
    private readonly log: PostgresSandboxCallLog,
    private readonly cfg: CliConfig,
    private readonly accounts: AcquirerAccountsRepository,
  ) {}

  get(): Promise<AcquirerRouter> {
    this.router ??= this.build();
    return this.router;
  }

  private async build(): Promise<AcquirerRouter> {
    const { accountsSource, createAcquirerRouter, readConnectorSettings } = await import('@app/acquirer/connectors');
    const env = new EnvReader(this.cfg.env);
    return createAcquirerRouter(
      // The sandbox serves every acquirer code here; its books are its call log, kept RETENTION_SANDBOX_CALLS. The CLI never authorizes.
      new SandboxAcquirer(this.log, { slowApprovalMs: 0, booksKeptMs: this.cfg.base.retention.sandboxCallsMs }),
      readConnectorSettings(env, env.int('ACQUIRER_TIMEOUT_MS', 3_000, 100, 60_000)),
      // The secrets ring is read only when a production merchant's account is opened.
      {
        routingOf: (id) => this.accounts.routingOf(id),
        accountOf: (id, code) => accountsSource(this.accounts, keyringSource(this.cfg, 'SECRETS_KEKS').keyring).accountOf(id, code),
      },
    );
  }
}
