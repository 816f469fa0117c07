import type { OperationName, SaleSnapshot, TransactionStatus } from '@app/contracts';
import { saleDetailsOf } from './sale-details';
import type { TransactionRow } from './transaction-rows';

/** How a transaction's operation is stored (the `transactions.operation` column). */
export const OPERATION_CODES: Record<OperationName, number> = { authorize: 1, capture: 2, sale: 3, cancel: 5, report: 6, rebill: 7 };
const OPERATION_NAMES = Object.fromEntries(Object.entries(OPERATION_CODES).map(([k, v]) => [v, k])) as Record<number, OperationName>;

/** The sale a row records, as messages carry it and answers are rendered from it. */
export function saleSnapshotOf(row: TransactionRow): SaleSnapshot {
  return {
    id: row.id,
    merchantId: row.merchant_id,
    reference: row.reference,
    operation: OPERATION_NAMES[row.operation],
    status: row.status as TransactionStatus,
    statusVersion: row.status_version,
    acquirer: row.acquirer,
    method: row.method,
    instalments: row.instalments,
    currency: row.currency,
    amount: Number(row.amount),
    capturedAmount: Number(row.captured_amount),
    cancelledAmount: Number(row.cancelled_amount),
    maskedCard: row.masked_card,
    brand: row.brand,
    tokenCard: row.token_card ?? undefined,
    errorCode: row.error_code,
    processor: row.processor,
    details: saleDetailsOf(row.details),
    urlReturn: row.url_return ?? undefined,
    createdAt: new Date(row.created_at).toISOString(),
  };
}

/**
 * The row of a sale the api has just recorded, from its snapshot: at its first version (status 0)
 * nothing is charged back or held by a capture or cancel yet, so those columns are known without
 * being sent. Undefined for a snapshot of a sale past its first version.
 */
export function pendingRowOf(sale: SaleSnapshot): TransactionRow | undefined {
  if (sale.statusVersion !== 1 || sale.status !== 0) return undefined;
  return {
    id: sale.id,
    merchant_id: sale.merchantId,
    reference: sale.reference,
    operation: OPERATION_CODES[sale.operation],
    status: sale.status,
    status_version: sale.statusVersion,
    acquirer: sale.acquirer,
    method: sale.method,
    instalments: sale.instalments,
    currency: sale.currency,
    amount: String(sale.amount),
    captured_amount: String(sale.capturedAmount),
    cancelled_amount: String(sale.cancelledAmount),
    masked_card: sale.maskedCard,
    brand: sale.brand,
    token_card: sale.tokenCard ?? null,
    error_code: sale.errorCode,
    processor: sale.processor,
    details: sale.details,
    url_return: sale.urlReturn ?? null,
    created_at: new Date(sale.createdAt),
    charged_back_amount: '0',
    pending_operation_id: null,
    pending_kind: null,
    pending_amount: null,
  };
}
