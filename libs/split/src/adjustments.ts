import type { MethodKind, SplitResult } from '@app/contracts';
import { MERCHANT } from '@app/contracts/parties';
import { dueDates } from './fees';
import { mulDivFloor } from './money';
import { principalIndex } from './split-engine';

export { MERCHANT };

export interface PayableCell {
  party: string;
  instalment: number;
  dueDate: string;
  gross: number;
  fee: number;
  net: number;
}

/**
 * docs/merchants/split.md 5: one payable per party × instalment. Fee and net are each divided floor(x/n) with
 * x mod n added to instalment 1, and gross cell = fee cell + net cell, so every column adds up to
 * the party's total. The merchant's row comes first, then the entries in declared order.
 */
export function payableCells(split: SplitResult, instalments: number, kind: MethodKind, capturedOn: string): PayableCell[] {
  const dates = dueDates(capturedOn, kind, instalments);
  const cells: PayableCell[] = [];
  const add = (party: string, fee: number, net: number) => {
    const feeEach = Math.floor(fee / instalments);
    const netEach = Math.floor(net / instalments);
    for (let k = 0; k < instalments; k++) {
      // floor(x/n) per instalment, x mod n added to instalment 1 (docs/merchants/split.md 5).
      const f = k === 0 ? fee - feeEach * (instalments - 1) : feeEach;
      const n = k === 0 ? net - netEach * (instalments - 1) : netEach;
      cells.push({ party, instalment: k + 1, dueDate: dates[k], gross: f + n, fee: f, net: n });
    }
  };
  add(MERCHANT, split.merchant.fee, split.merchant.net);
  for (const e of split.entries) add(e.recipient, e.fee, e.net);
  return cells;
}

export interface Debit {
  party: string;
  amount: number;
}

/**
 * Parties' cumulative debits for `total` cents, spread by weight with floors and the remainder
 * to `remainderTo` (an index into weights, or -1 for the merchant).
 */
function cumulative(total: number, weights: number[], weightSum: number, remainderTo: number): { entries: number[]; merchant: number } {
  const entries = weights.map((w) => (weightSum > 0 ? mulDivFloor(total, w, weightSum) : 0));
  const rest = total - entries.reduce((s, x) => s + x, 0);
  if (remainderTo < 0) return { entries, merchant: rest };
  entries[remainderTo] += rest;
  return { entries, merchant: 0 };
}

function deltas(
  split: SplitResult,
  before: { entries: number[]; merchant: number },
  after: { entries: number[]; merchant: number },
): Debit[] {
  return [
    { party: MERCHANT, amount: after.merchant - before.merchant },
    ...split.entries.map((e, i) => ({ party: e.recipient, amount: after.entries[i] - before.entries[i] })),
  ].filter((d) => d.amount !== 0);
}

/**
 * docs/merchants/split.md 6: the debits of one cancellation that brings the cancelled total from `before` to
 * `after` cents. Computed cumulatively (floor(R_cum × gᵢ / G), the merchant takes the rest) so
 * repeated partial cancels never drift and a full cancel debits each party exactly its gross
 * slice; this cancel's debits are the difference. The operator keeps the fee. A consequence of the
 * rule as written: when several entries cross a cent at once, the merchant's difference for one
 * cancel can be negative by those tie cents (its cumulative stays within a cent per entry of
 * its share, and the total still equals this cancel's amount).
 */
export function cancellationDebits(split: SplitResult, before: number, after: number): Debit[] {
  const weights = split.entries.map((e) => e.gross);
  const at = (r: number) => cumulative(r, weights, split.gross, -1);
  return deltas(split, at(before), at(after));
}

/**
 * docs/merchants/split.md 7: chargebacks debit only liable entries, in proportion to their gross slices, the
 * remainder to the principal liable entry (largest slice, ties to the earliest); with no liable
 * entry the merchant bears all of it. Cumulative like cancellations. Where the spec is silent:
 * liable entries whose slices are all 0 cents (a 1 % entry of a sale under 1.00) have no weight,
 * so the principal liable entry takes the whole amount.
 */
export function chargebackDebits(split: SplitResult, before: number, after: number): Debit[] {
  const liable = (i: number) => split.entries[i].liable;
  const principal = principalIndex(split.entries, liable);
  const weights = split.entries.map((e, i) => (liable(i) ? e.gross : 0));
  const sum = weights.reduce((s, w) => s + w, 0);
  const at = (c: number) => cumulative(c, weights, sum, principal);
  return deltas(split, at(before), at(after));
}
