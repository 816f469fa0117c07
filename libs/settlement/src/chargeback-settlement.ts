import { Injectable } from '@nestjs/common';
import { DomainError, ErrorCodes } from '@app/contracts';
import { LedgerRepository } from '@app/persistence';
import { chargebackDebits, Debit } from '@app/split';
import { CaptureSettlement } from './capture-settlement';
import { debitPayables, today } from './ledger-cells';

export interface ChargebackOutcome {
  chargedBack: number;
  debits: Debit[];
  repeated: boolean;
}

/**
 * A chargeback of `amount` cents (docs/merchants/split.md 7): debits the liable entries, else the merchant.
 * With the acquirer's `chargebackId`, recording the same chargeback again changes nothing.
 */
@Injectable()
export class ChargebackSettlement {
  constructor(
    private readonly ledger: LedgerRepository,
    private readonly capture: CaptureSettlement,
  ) {}

  record(transactionId: string, amount: number, chargebackId?: string): Promise<ChargebackOutcome> {
    return this.ledger.inTransaction(async (tx) => {
      let s = await this.ledger.lockSettlement(tx, transactionId);
      if (!s) {
        // A chargeback may come before settlement got to the capture: settle it first.
        if ((await this.capture.claimWithin(tx, transactionId)) === 'nothing_captured') {
          throw new DomainError('not_found', ErrorCodes.TransactionNotFound, `No captured amount for transaction ${transactionId}.`);
        }
        s = (await this.ledger.lockSettlement(tx, transactionId))!;
      }
      const before = Number(s.charged_back);
      if (chargebackId !== undefined) {
        const known = await this.ledger.recordedChargebackAmount(tx, transactionId, chargebackId);
        if (known !== undefined) {
          if (Number(known) !== amount)
            throw DomainError.validation(
              ErrorCodes.InvalidField,
              'amount',
              `chargeback ${chargebackId} was recorded with ${known} cents, not ${amount}.`,
            );
          return { chargedBack: before, debits: [], repeated: true };
        }
      }
      // Judged on the transaction's row, under its lock, beside its cancels and a cancel still in
      // flight (its amount is reserved); a cancel's claim re-checks the same columns when it takes
      // the row after this: a chargeback and a cancel can never both take the same cents back.
      const open = Math.max(0, await this.ledger.lockOpenAmount(tx, transactionId));
      if (amount > open) {
        throw DomainError.validation(
          ErrorCodes.InvalidField,
          'amount',
          `amount must not exceed the ${open} cents captured and neither cancelled (nor being cancelled) nor charged back.`,
        );
      }
      await this.ledger.addChargedBack(tx, transactionId, amount);
      const debits = chargebackDebits(s.split, before, before + amount);
      await this.ledger.insertPayables(tx, s.transaction_id, s.merchant_id, 'chargeback', debitPayables(debits, today()));
      await this.ledger.setSettledChargedBack(tx, transactionId, before + amount);
      if (chargebackId !== undefined) await this.ledger.recordChargebackId(tx, transactionId, chargebackId, amount);
      return { chargedBack: before + amount, debits, repeated: false };
    });
  }
}
