import { Inject, Injectable, Logger, OnApplicationBootstrap, OnApplicationShutdown } from '@nestjs/common';
import type { PartitionedQueue } from '@app/messaging';
import { TransactionsRepository } from '@app/persistence';
import { PeriodicPass, safeErrorText } from '@app/platform';
import { TokenizerConfig } from '../config/tokenizer.config';
import { SalesService } from './sales.service';

export const AUTHORIZE_QUEUE = Symbol('AUTHORIZE_QUEUE');

/**
 * Every sale ends in a final status. A sale still at status 0 after SALE_ORPHAN_AFTER_S whose
 * authorization job is gone from the queue will never be decided by a job (its API stopped
 * between recording and queueing it, or its decision could not be recorded): it is abandoned
 * (SalesService.abandon). A sale whose job still waits (tokenizers down, a backlog) is left to
 * the job. Runs in every tokenizer; a status moves by compare-and-set, so two of them agree.
 */
@Injectable()
export class PendingSalesReconciler implements OnApplicationBootstrap, OnApplicationShutdown {
  private readonly logger = new Logger(PendingSalesReconciler.name);
  private readonly periodic = new PeriodicPass(() => this.pass());

  constructor(
    private readonly transactions: TransactionsRepository,
    private readonly sales: SalesService,
    private readonly config: TokenizerConfig,
    @Inject(AUTHORIZE_QUEUE) private readonly queue: PartitionedQueue,
  ) {}

  onApplicationBootstrap(): void {
    this.periodic.start(this.config.reconcileIntervalMs);
  }

  async onApplicationShutdown(): Promise<void> {
    await this.periodic.stop();
    await this.queue.close();
    this.queue.connection.disconnect();
  }

  /** One pass; returns how many sales it abandoned. */
  sweep(): Promise<number> {
    return this.periodic.run();
  }

  private async pass(): Promise<number> {
    let abandoned = 0;
    try {
      for (const stale of await this.transactions.findStalePending(this.config.orphanAfterS, 100)) {
        try {
          // The authorization job's id is the transaction id (which also picks its partition); while it exists, it decides the sale.
          if (await this.queue.getJob(stale.id)) continue;
          // A job is removed only after its decision committed: re-read, so a sale decided while
          // this pass ran is never reversed.
          const row = await this.transactions.findByMerchantAndId(stale.merchant_id, stale.id);
          if (!row || row.status !== 0 || row.status_version !== stale.status_version) continue;
          const view = await this.sales.abandon(row);
          abandoned++;
          this.logger.warn(
            { transactionId: view.id, status: view.status, errorCode: view.errorCode },
            'pending sale without an authorization job: abandoned',
          );
        } catch (e) {
          // One sale the acquirer or a dependency refused does not hold up the others.
          this.logger.warn(`pending sale ${stale.id}: ${safeErrorText(e)}`);
        }
      }
    } catch (e) {
      // Postgres down: the next pass tries again.
      this.logger.warn(`pending sales pass failed: ${safeErrorText(e)}`);
    }
    return abandoned;
  }
}
