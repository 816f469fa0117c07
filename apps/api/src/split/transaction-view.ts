import type { TransactionView } from '@app/contracts';
import { toTransactionView as storedView, TransactionRow } from '@app/persistence';
import { splitOfTransaction } from '@app/split';

/** A transaction's answer, with its split as settlement computes it from the terms frozen at the sale. */
export function toTransactionView(row: TransactionRow): TransactionView {
  return storedView(row, splitOfTransaction(row));
}
