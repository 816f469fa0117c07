import { Injectable, Logger } from '@nestjs/common';
import { Events } from '@app/contracts';
import { LedgerRepository, PublishedSettlementEvent } from '@app/persistence';
import { PublishedSweep } from '@app/platform';
import { CancelSettlement, CaptureSettlement } from '@app/settlement';
import { SettlementConfig } from '../config/settlement.config';
import { settlementsSwept } from './settlement-metrics';

/**
 * No capture or cancel is left unsettled by a lost event. The outbox is the record of both; the
 * event on the stream is only the fast path. An event Redis forgot, or one whose retries ran out
 * while Postgres was down (a dead letter), leaves a transaction whose payables were never written
 * or never reversed. Each pass reads the captures and cancels published from where the last one
 * stopped until SETTLEMENT_SWEEP_GRACE_S ago (PublishedSweep) and settles each transaction whose
 * settlement is behind, with the same use cases the events run: they read the transaction as it is
 * now and write what is missing, so a late event or a second replica's sweep writes nothing twice.
 */
@Injectable()
export class SettlementSweeper extends PublishedSweep<PublishedSettlementEvent> {
  constructor(ledger: LedgerRepository, captures: CaptureSettlement, cancels: CancelSettlement, config: SettlementConfig) {
    super({
      read: (after, upTo, limit) => ledger.publishedSettlementEvents(after, upTo, limit),
      // The use cases lock the settlement: a capture and a cancel of one transaction side by side,
      // or two replicas' sweeps, settle it once (a cancel's settles its capture first when it must).
      repair: async (e) =>
        e.behind &&
        (e.event === Events.TransactionCancelled ? await cancels.settle(e.transactionId) : await captures.settle(e.transactionId)) ===
          'written',
      counted: (outcome, rows) => settlementsSwept.inc({ outcome: outcome === 'repaired' ? 'settled' : outcome }, rows),
      graceS: config.sweepGraceS,
      horizonS: config.sweepHorizonS,
      intervalMs: config.sweepIntervalMs,
      logger: new Logger(SettlementSweeper.name),
      repairedMessage: 'captures or cancels whose settlement was behind (their events were lost): settled from the outbox',
    });
  }
}
