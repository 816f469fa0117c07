import { Injectable, Logger } from '@nestjs/common';
import { TransactionEvent } from '@app/contracts';
import { CancelSettlement, CaptureSettlement } from '@app/settlement';

/**
 * Payables on capture, reversals on cancel (docs/merchants/split.md 5 and 6). Re-delivery is expected (the
 * outbox publishes at least once, a killed worker's job runs again): "already done" is a quiet
 * success, never a second set of payables.
 */
@Injectable()
export class SettlementService {
  private readonly logger = new Logger(SettlementService.name);

  constructor(
    private readonly captures: CaptureSettlement,
    private readonly cancels: CancelSettlement,
  ) {}

  async onCaptured(e: TransactionEvent): Promise<void> {
    const outcome = await this.captures.settle(e.transactionId.toLowerCase());
    this.logger.debug?.({ transactionId: e.transactionId, outcome }, 'capture settled');
  }

  async onCancelled(e: TransactionEvent): Promise<void> {
    const outcome = await this.cancels.settle(e.transactionId.toLowerCase());
    this.logger.debug?.({ transactionId: e.transactionId, outcome }, 'cancellation settled');
  }
}
