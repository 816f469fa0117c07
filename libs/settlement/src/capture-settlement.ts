import { Injectable } from '@nestjs/common';
import type { EntityManager } from 'typeorm';
import type { SaleTerms } from '@app/contracts';
import { CaptureClaim, CapturedRow, LedgerRepository, statementBatcher } from '@app/persistence';
import { methodKind, payableCells, splitUnderTerms } from '@app/split';
import { today, toPayableWrite } from './ledger-cells';

export type SettleOutcome = 'written' | 'already' | 'nothing_captured';

/** How long settlement gathers captured events before settling them together. */
const CAPTURE_BATCH_MS = 20;

/** What settling a capture writes: the split of the captured amount, payables per party × instalment. */
function captureClaim(id: string, t: CapturedRow, terms: SaleTerms): CaptureClaim {
  const gross = Number(t.captured_amount);
  const split = splitUnderTerms(terms, gross);
  const capturedOn = today();
  const cells = payableCells(split, t.instalments, methodKind(t.method), capturedOn);
  return {
    id,
    merchantId: t.merchant_id,
    gross,
    fee: split.fee,
    instalments: t.instalments,
    split,
    capturedOn,
    payables: cells.map(toPayableWrite),
  };
}

/**
 * On transaction.captured (docs/merchants/split.md 5): the split of the captured amount, as payables per party ×
 * instalment, written once per transaction however often the event arrives; the amounts come from
 * the split engine alone.
 */
@Injectable()
export class CaptureSettlement {
  private readonly batched: (transactionId: string) => Promise<SettleOutcome>;

  constructor(private readonly ledger: LedgerRepository) {
    // Payables are written after the sale was answered and nobody waits on them: captures are
    // gathered for CAPTURE_BATCH_MS, so one read and one write serve many.
    this.batched = statementBatcher((ids) => this.claimAll(this.ledger.autocommit, ids), { delayMs: CAPTURE_BATCH_MS });
  }

  settle(transactionId: string): Promise<SettleOutcome> {
    // No explicit transaction: a read, then one statement that claims and writes (two round
    // trips), shared by the captures that arrive together.
    return this.batched(transactionId);
  }

  /** Claims the transaction's settlement inside `tx` and writes its capture payables, unless already done. */
  async claimWithin(tx: EntityManager, transactionId: string): Promise<SettleOutcome> {
    const [outcome] = await this.claimAll(tx, [transactionId]);
    if (outcome instanceof Error) throw outcome;
    return outcome;
  }

  /**
   * Claims many transactions in two statements: one read, then one statement that claims every
   * settlement not claimed yet and writes its payables (a transaction twice in the list is
   * claimed by its first entry; the second finds it done). Per transaction, its outcome, or an
   * Error for it alone.
   */
  private async claimAll(tx: EntityManager, given: readonly string[]): Promise<(SettleOutcome | Error)[]> {
    const ids = given.map((id) => id.toLowerCase()); // one spelling per transaction, as Postgres returns it
    const read = await this.ledger.readCaptured(tx, ids);
    const byId = new Map(read.map((t) => [t.id, t]));
    const outcomes = new Map<string, SettleOutcome | Error>();
    const claims: CaptureClaim[] = [];
    for (const id of new Set(ids)) {
      const t = byId.get(id);
      const gross = t ? Number(t.captured_amount) : 0;
      if (!t || gross === 0) outcomes.set(id, 'nothing_captured');
      else if (!t.terms) outcomes.set(id, new Error(`transaction ${id} has no settlement terms`));
      else claims.push(captureClaim(id, t, t.terms));
    }
    if (claims.length) {
      const claimed = await this.ledger.claimCaptures(tx, claims);
      for (const c of claims) outcomes.set(c.id, claimed.has(c.id) ? 'written' : 'already');
    }
    const seen = new Set<string>();
    // A transaction twice in the list: its first entry did the work, the second finds it done.
    return ids.map((id) => {
      const outcome = outcomes.get(id)!;
      if (seen.has(id) && outcome === 'written') return 'already';
      seen.add(id);
      return outcome;
    });
  }
}
