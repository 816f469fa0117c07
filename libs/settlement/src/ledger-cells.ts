import { MERCHANT } from '@app/contracts/parties';
import type { Debit, PayableCell } from '@app/split';
import type { PayableWrite } from '@app/persistence';

/** Today's UTC date, YYYY-MM-DD: the day a capture is settled on and debits fall due. */
export const today = (): string => new Date().toISOString().slice(0, 10);

/** A payable cell as the ledger stores it: the merchant is the row without a recipient. */
export function toPayableWrite(cell: PayableCell): PayableWrite {
  return {
    recipientId: cell.party === MERCHANT ? null : cell.party,
    instalment: cell.instalment,
    dueDate: cell.dueDate,
    gross: cell.gross,
    fee: cell.fee,
    net: cell.net,
  };
}

/** Debits are due at once, in one instalment, and carry no fee (the operator keeps it). */
export function debitPayables(debits: readonly Debit[], on: string): PayableWrite[] {
  return debits.map((d) => toPayableWrite({ party: d.party, instalment: 1, dueDate: on, gross: d.amount, fee: 0, net: d.amount }));
}
