import { Injectable } from '@nestjs/common';
import { LedgerRepository } from '@app/persistence';
import { cancellationDebits } from '@app/split';
import { CaptureSettlement, SettleOutcome } from './capture-settlement';
import { debitPayables, today } from './ledger-cells';

/**
 * On transaction.cancelled (docs/merchants/split.md 6): the debits that bring the settled cancellations up to
 * what the transaction has cancelled now. The amount is read from the transaction, never taken
 * from the event, and a cancel that arrives before its capture was settled settles the capture
 * first: the order of events, or a late or repeated one, never matters.
 */
@Injectable()
export class CancelSettlement {
  constructor(
    private readonly ledger: LedgerRepository,
    private readonly capture: CaptureSettlement,
  ) {}

  settle(transactionId: string): Promise<SettleOutcome> {
    return this.ledger.inTransaction(async (tx) => {
      let s = await this.ledger.lockSettlement(tx, transactionId);
      if (!s) {
        // A cancelled authorization was never captured: nothing was paid out, nothing to reverse.
        if ((await this.capture.claimWithin(tx, transactionId)) === 'nothing_captured') return 'nothing_captured';
        s = (await this.ledger.lockSettlement(tx, transactionId))!;
      }
      const cancelled = await this.ledger.cancelledAmountOf(tx, transactionId);
      const before = Number(s.cancelled);
      // What a chargeback already took back cannot be refunded again (the tokenizer refuses such a
      // cancel; should one get through, ledger:verify shows the difference instead of a job
      // failing forever).
      const target = Math.min(cancelled, Number(s.gross) - Number(s.charged_back));
      if (target <= before) return 'already';
      await this.ledger.insertPayables(
        tx,
        s.transaction_id,
        s.merchant_id,
        'cancel',
        debitPayables(cancellationDebits(s.split, before, target), today()),
      );
      await this.ledger.setSettledCancelled(tx, transactionId, target);
      return 'written';
    });
  }
}
