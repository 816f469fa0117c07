import { EventName, OperationName, SaleDetails, TransactionStatus, TransactionView } from '@app/contracts';

/**
 * A transactions row as Postgres returns it. `details` is the stored JSON as read: its typed
 * value is saleDetailsOf's (sale-details.ts), never read field by field here and there.
 */
export interface TransactionRow {
  id: string;
  merchant_id: string;
  reference: string;
  operation: number;
  status: number;
  status_version: number;
  acquirer: number;
  method: number;
  instalments: number;
  currency: string;
  amount: string; // int8 comes back as text: converted with Number() only when rendered (cents < 2^53)
  captured_amount: string;
  cancelled_amount: string;
  masked_card: string;
  brand: string;
  token_card: string | null;
  error_code: string;
  processor: TransactionView['processor'];
  details: unknown;
  url_return: string | null;
  created_at: Date;
  /** Cents of the capture that chargebacks took back (a cancel can never refund them again). */
  charged_back_amount: string;
  /** The capture or cancel that holds the transaction (see OperationsRepository), if any. */
  pending_operation_id: string | null;
  pending_kind: 'capture' | 'cancel' | null;
  pending_amount: string | null;
}

export type OperationKind = 'capture' | 'cancel';

export interface ReconciliationRow {
  id: string;
  merchant_id: string;
  status: number;
  captured_amount: string;
  cancelled_amount: string;
  tid: string | null;
  /** The acquirer's own reference for follow-ups (Cielo's PaymentId), when it has one. */
  sale_ref: string | null;
  acquirer: number;
  held_since: Date | null;
  updated_at: Date;
}

export interface NewTransaction {
  id: string;
  merchantId: string;
  reference: string;
  operation: OperationName;
  acquirer: number;
  method: number;
  instalments: number;
  currency: string;
  amount: number;
  maskedCard: string;
  brand: string;
  tokenCard?: string;
  details: SaleDetails;
  urlReturn?: string;
}

export interface Transition {
  status: TransactionStatus;
  capturedAmount?: number;
  cancelledAmount?: number;
  errorCode?: string;
  processor?: TransactionView['processor'];
  tokenCard?: string;
  maskedCard?: string;
  brand?: string;
}

export interface OutboxEvent {
  event: EventName;
  payload: unknown;
}

/** The row as it is after `change` (status_version one up); nothing else is touched. */
export function changedRow(row: TransactionRow, change: Transition): TransactionRow {
  return {
    ...row,
    status: change.status,
    status_version: row.status_version + 1,
    captured_amount: change.capturedAmount !== undefined ? String(change.capturedAmount) : row.captured_amount,
    cancelled_amount: change.cancelledAmount !== undefined ? String(change.cancelledAmount) : row.cancelled_amount,
    error_code: change.errorCode ?? row.error_code,
    processor: { ...row.processor, ...change.processor },
    token_card: change.tokenCard ?? row.token_card,
    masked_card: change.maskedCard ?? row.masked_card,
    brand: change.brand ?? row.brand,
  };
}
