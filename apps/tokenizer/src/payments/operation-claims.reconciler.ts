import { Injectable, Logger, OnApplicationBootstrap, OnApplicationShutdown } from '@nestjs/common';
import { OperationsRepository } from '@app/persistence';
import { PeriodicPass, safeErrorText } from '@app/platform';
import { TokenizerConfig } from '../config/tokenizer.config';
import { MoneyOperationsService } from './money-operations.service';

/**
 * No transaction stays held and no acquirer operation goes unrecorded: a capture or cancel still
 * pending after CLAIM_STALE_AFTER_S lost its worker (SIGKILL between claim and outcome, or after
 * the acquirer answered). Each is settled with the acquirer by its operation key and recorded
 * (MoneyOperationsService.resolveStale). Runs in every tokenizer; every step is a compare-and-set on the
 * claim, so two of them, or a retry completing the same request, agree.
 */
@Injectable()
export class OperationClaimsReconciler implements OnApplicationBootstrap, OnApplicationShutdown {
  private readonly logger = new Logger(OperationClaimsReconciler.name);
  private readonly periodic = new PeriodicPass(() => this.pass());

  constructor(
    private readonly operations: OperationsRepository,
    private readonly moneyOperations: MoneyOperationsService,
    private readonly config: TokenizerConfig,
  ) {}

  onApplicationBootstrap(): void {
    this.periodic.start(this.config.reconcileIntervalMs);
  }

  onApplicationShutdown(): Promise<void> {
    return this.periodic.stop();
  }

  /** One pass; returns how many claims it settled. */
  sweep(): Promise<number> {
    return this.periodic.run();
  }

  private async pass(): Promise<number> {
    let settled = 0;
    try {
      for (const op of await this.operations.findStale(this.config.claimStaleAfterS, 100)) {
        try {
          const view = await this.moneyOperations.resolveStale(op);
          settled++;
          this.logger.warn(
            { transactionId: op.transaction_id.toUpperCase(), operation: op.kind, amount: Number(op.amount), status: view?.status },
            'claim left by a stopped worker: settled with the acquirer',
          );
        } catch (e) {
          // One the acquirer cannot answer now stays for the next pass; the others go on.
          this.logger.warn(`claim ${op.id}: ${safeErrorText(e)}`);
        }
      }
    } catch (e) {
      this.logger.warn(`claims pass failed: ${safeErrorText(e)}`);
    }
    return settled;
  }
}
