import type { SplitResult } from './split';
import { OperationName, RecordedSale, TransactionStatus, TransactionView } from './transactions';

/** How a transaction's operation is stored (the `transactions.operation` column). */
export const OPERATION_CODES: Record<OperationName, number> = { authorize: 1, capture: 2, sale: 3, cancel: 5, report: 6, rebill: 7 };
const OPERATION_NAMES = Object.fromEntries(Object.entries(OPERATION_CODES).map(([k, v]) => [v, k])) as Record<number, OperationName>;

/** A rebill's charge names its rebill and cycle (recorded in its details when it was opened). */
function rebillChargeOf(details: Record<string, unknown> | null | undefined): Pick<TransactionView, 'rebillCharge'> {
  const r = details?.rebill as { id?: unknown; cycle?: unknown; attempt?: unknown } | undefined;
  if (!r || typeof r.id !== 'string' || typeof r.cycle !== 'number' || typeof r.attempt !== 'number') return {};
  return { rebillCharge: { rebillId: r.id, cycle: r.cycle, attempt: r.attempt } };
}

/**
 * The answer for a transaction as stored; its split, computed by the split engine from the terms
 * frozen at the sale, is the caller's to give.
 */
export function toTransactionView(row: RecordedSale, split: SplitResult | undefined): TransactionView {
  return {
    id: row.id.toUpperCase(),
    operation: OPERATION_NAMES[row.operation],
    status: row.status as TransactionStatus,
    statusVersion: row.status_version,
    errorCode: row.error_code,
    reference: row.reference,
    currency: row.currency,
    amount: Number(row.amount),
    capturedAmount: Number(row.captured_amount),
    cancelledAmount: Number(row.cancelled_amount),
    acquirer: row.acquirer,
    instalments: row.instalments,
    createdAt: new Date(row.created_at).toISOString(),
    processor: row.processor ?? {},
    tokenCard: row.token_card ?? undefined,
    split,
    ...rebillChargeOf(row.details),
  };
}
