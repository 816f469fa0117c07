import { Injectable } from '@nestjs/common';
import { rebillChargeId, RebillState } from '@app/contracts';
import {
  AdvanceResult,
  distinctGroups,
  NewRebill,
  OpenedCharge,
  RebillRow,
  RebillsRepository,
  statementBatcher,
  TransactionRow,
} from '@app/persistence';
import { firstChargeOf, nextChargeOf } from './charges';
import { advanceResults, decideAdvance, suspensionEvent, suspensionsToTell } from './rebill-advance';
import { dueAt } from './schedule';

/** The states a merchant may cancel a rebill from: a completed one has nothing left to stop. */
const CANCELLABLE: readonly RebillState[] = ['active', 'suspended'];

type AdvanceKey = { rebillId: string; transactionId: string };

/**
 * What happens to a rebill, each step decided here and written by RebillsRepository in one
 * Postgres transaction. The invariants that make "each cycle charged exactly once" hold:
 * - a charge's transaction id is derived from (rebill, cycle, attempt) (rebillChargeId);
 * - a charge is opened only for an active rebill with none open, under its row lock, in the same
 *   Postgres transaction that sets `open_transaction_id` (openDue; create for the first);
 * - a rebill moves on only from the charge it has open, once that charge is decided, by
 *   compare-and-set on `open_transaction_id` (advance), so one decision moves it once.
 */
@Injectable()
export class RebillLifecycle {
  /** Concurrent advances go out as one Postgres transaction (see statementBatcher). */
  private readonly advanceOne: (key: AdvanceKey) => Promise<AdvanceResult | undefined>;

  constructor(readonly repository: RebillsRepository) {
    this.advanceOne = statementBatcher((keys) => this.advanceMany(keys));
  }

  /**
   * Records a new rebill and, when its first cycle is already due, that cycle's charge (opened,
   * status 0), in one Postgres transaction.
   */
  async create(r: NewRebill, chargeFirst: boolean): Promise<{ rebill: RebillRow; charge?: TransactionRow }> {
    return this.repository.transaction(async (m) => {
      const start = { nextDueAt: dueAt(r.dateStart, r.shiftDays), openTransactionId: chargeFirst ? rebillChargeId(r.id, 1, 0) : null };
      const rebill = await this.repository.insert(m, r, start);
      if (!chargeFirst) return { rebill };
      const [charge] = await this.repository.insertCharges(m, [firstChargeOf(rebill, r)]);
      return { rebill, charge };
    });
  }

  /**
   * Opens the next charge of up to `limit` active rebills due at `asOf` with nothing open, oldest
   * due first. Rows another runner has locked are skipped (it is opening them).
   */
  async openDue(asOf: Date, limit: number): Promise<OpenedCharge[]> {
    return this.repository.transaction(async (m) => {
      const due = await this.repository.lockDue(m, asOf, limit);
      if (!due.length) return [];
      const charges = due.map(nextChargeOf);
      const rows = await this.repository.insertCharges(m, charges);
      await this.repository.markOpen(m, charges);
      return charges.map((c, i) => ({
        rebillId: c.rebillId,
        merchantId: c.rebill.merchant_id,
        transactionId: c.tx.id,
        tokenCard: c.rebill.token_card,
        cycle: c.cycle,
        attempt: c.attempt,
        merchantInitiated: c.mit,
        recorded: rows[i],
      }));
    });
  }

  /** Moves the rebill on from its open charge once that is decided; undefined when there is nothing to do. */
  advance(rebillId: string, transactionId: string): Promise<AdvanceResult | undefined> {
    return this.advanceOne({ rebillId: rebillId.toLowerCase(), transactionId: transactionId.toLowerCase() });
  }

  /**
   * Stops future cycles (a charge already open is decided if the tokenizer had sent it to the
   * acquirer, else the tokenizer abandons it unsent, 4/101). Returns the rebill as it now is,
   * 'already' when it was cancelled before, 'finished' when it completed its schedule.
   */
  async cancel(merchantId: string, id: string): Promise<RebillRow | 'already' | 'finished' | undefined> {
    const cancelled = await this.repository.cancel(merchantId, id, CANCELLABLE);
    if (cancelled) return cancelled;
    const now = await this.repository.find(merchantId, id);
    if (!now) return undefined;
    return now.state === 'cancelled' ? 'already' : 'finished';
  }

  /** Whether a rebill was cancelled: a charge of it not yet sent to the acquirer is then not sent. */
  async isCancelled(rebillId: string): Promise<boolean> {
    return (await this.repository.stateOf(rebillId)) === 'cancelled';
  }

  /**
   * One Postgres transaction for many advances. A rebill locked by someone else is skipped: the
   * holder is advancing or cancelling it, and the scheduler's next pass finds it if not.
   */
  private async advanceMany(keys: readonly AdvanceKey[]): Promise<(AdvanceResult | undefined)[]> {
    // Two callers may ask for the same advance at once (a charge's job following its decision up
    // while a scheduler pass finds it not yet moved on) and land in one batch. The rebill moves on
    // once: the first asks, a repeat finds nothing left to do, as if it came after (compare-and-set).
    // Joined twice, the rebill would be selected twice, and its suspension told twice.
    const [unique] = distinctGroups(keys, (k) => `${k.rebillId}/${k.transactionId}`);
    const asked = new Set(unique);
    const results = await this.repository.transaction(async (m) => {
      const rows = await this.repository.lockDecided(m, unique);
      if (!rows.length) return new Map<string, AdvanceResult>();
      const updates = rows.map(decideAdvance);
      await this.repository.writeAdvances(m, updates);
      // The merchant hears of a suspension on its listener (each charge's outcome is the charge's own event).
      const told = suspensionsToTell(updates);
      if (told.length) {
        const cycles = await this.repository.cyclesOf(
          m,
          told.map((u) => u.r.id),
        );
        await this.repository.insertOutboxEvents(
          m,
          told.map((u) => suspensionEvent(u, cycles.get(u.r.id) ?? [])),
        );
      }
      return advanceResults(updates);
    });
    return keys.map((k) => {
      if (!asked.has(k)) return undefined;
      const r = results.get(k.rebillId);
      return r && r.transactionId === k.transactionId ? r : undefined;
    });
  }
}
