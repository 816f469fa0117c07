import type { RebillDetailsView, RebillPaymentView } from './rebill-view';
import type { PayableView, SplitEntryInput, SplitResult } from './split';
import type { Billing, ClearCard } from './tokens';

/** WIRE.md 4.3. */
export const TransactionStatus = {
  Waiting: 0,
  Authorized: 3,
  Unauthorized: 4,
  Cancelled: 6,
  Approved: 8,
  PartialCancelled: 12,
  /** A rebill (recurring schedule) that may still charge; its cycles are in processor.payments. */
  Scheduled: 10,
} as const;
export type TransactionStatus = (typeof TransactionStatus)[keyof typeof TransactionStatus];

export const StatusMessages: Record<TransactionStatus, string> = {
  0: 'WAITING FOR PAYMENT',
  3: 'AUTHORIZED',
  4: 'UNAUTHORIZED',
  6: 'CANCELLED',
  8: 'APPROVED',
  12: 'PARTIAL CANCELLED',
  10: 'SCHEDULED',
};

/** WIRE.md 4.1 `operationId`. */
export const OperationIds = { authorize: 1, capture: 2, sale: 3, cancel: 5, report: 6, rebill: 7 } as const;
export type OperationName = keyof typeof OperationIds;

/** WIRE.md 4.1 `method`. */
export const PaymentMethods = { CreditOneShot: 1, CreditMerchantInstalments: 2, CreditIssuerInstalments: 3, Debit: 4 } as const;
export type PaymentMethod = (typeof PaymentMethods)[keyof typeof PaymentMethods];

/** A validated sale/authorize request (WIRE.md 4.1), amounts in integer cents. */
export interface SaleInput {
  order: { reference: string; totalAmount: number };
  payment: {
    acquirer: number;
    method: PaymentMethod;
    amount: number;
    currency: string; // ISO 4217 numeric, e.g. "986"
    country: string; // three letters
    numberOfPayments: number;
    groupNumber?: string;
    flag?: string;
    softDescriptor?: string;
    departureTax?: number;
    saveCreditCard: boolean;
    generateToken: boolean;
    split?: SplitEntryInput[];
    /** Exactly one of `card` (inline card fields) or `tokenCard` (a token of the same merchant). */
    card?: ClearCard;
    tokenCard?: string;
    /** With a token, the security code may still be sent (it is never stored). */
    cardSecurityCode?: string;
  };
  billing?: Billing;
  urlReturn?: string;
  fraud: boolean;
}

/** What the gateway knows of a transaction; the API renders it as the TransactionResponse. */
export interface TransactionView {
  id: string; // upper-case GUID
  operation: OperationName;
  status: TransactionStatus;
  statusVersion: number;
  errorCode: string;
  reference: string;
  currency: string;
  amount: number;
  capturedAmount: number;
  cancelledAmount: number;
  acquirer: number;
  instalments: number;
  createdAt: string; // ISO 8601
  processor: { tid?: string; nsu?: string; authorizationCode?: string; returnCode?: string; returnMessage?: string };
  tokenCard?: string;
  /** The split of the captured amount (or of the sale amount before capture). */
  split?: SplitResult;
  /** Filled by report once settlement has written them. */
  payables?: PayableView[];
  /** A rebill: its cycles (processor.payments on the wire) and its schedule. */
  payments?: RebillPaymentView[];
  rebill?: RebillDetailsView;
  /** A rebill's charge: which rebill, cycle and dunning attempt it is. */
  rebillCharge?: { rebillId: string; cycle: number; attempt: number };
}

/** card.authorize: the API has inserted the transaction (status 0); the tokenizer decides it. */
export interface AuthorizeRequest {
  transactionId: string;
  merchantId: string;
  /** JWE of ClearCard (inline card), or a token of the same merchant. */
  sealedCard?: string;
  tokenCard?: string;
  /** A security code sent with a token travels sealed too. */
  sealedSecurityCode?: string;
  flag?: string;
  capture: boolean;
  saveCard: boolean;
  billing?: Billing;
  /**
   * A rebill's cycle: the charge is merchant-initiated (no security code, the card on file), and
   * the rebill moves on once it is decided.
   */
  rebill?: { id: string; merchantInitiated: boolean };
  /**
   * The sale as the API just recorded it (status 0): on a first delivery the tokenizer decides it
   * from this instead of reading it back.
   */
  recorded?: RecordedSale;
}

/**
 * A transactions row as Postgres returned it to the API, sent with card.authorize: the tokenizer
 * decides the sale from it and writes the decision by compare-and-set on it, so it carries every
 * column. `created_at` is a Date in the API and ISO text once the job is read back.
 */
export interface RecordedSale {
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
  details: Record<string, unknown>;
  url_return: string | null;
  created_at: string | Date;
  /** Cents of the capture that chargebacks took back (a cancel can never refund them again). */
  charged_back_amount: string;
  /** The capture or cancel that holds the transaction (see OperationsRepository), if any. */
  pending_operation_id: string | null;
  pending_kind: 'capture' | 'cancel' | null;
  pending_amount: string | null;
}

export interface CaptureRequest {
  transactionId: string;
  merchantId: string;
  amount?: number;
  /**
   * This operation's id, chosen by the API: the same for a retry with the same Idempotency-Key,
   * so a retry finds the operation it repeats (done: its outcome; still open: it completes it)
   * instead of applying it a second time. The acquirer's operation key derives from it.
   */
  operationId: string;
  /**
   * Epoch ms after which the caller no longer waits for the reply: the operation is not started
   * after it (the caller has answered "retry" by then), so no late change happens unanswered.
   */
  notAfter: number;
}

export type CancelRequest = CaptureRequest;

/** The payload of every transaction event; amounts are the transaction's cumulative ones. */
export interface TransactionEvent {
  transactionId: string;
  merchantId: string;
  statusVersion: number;
  status?: TransactionStatus;
  /** This operation's amount (captured/cancelled events). */
  amount?: number;
  capturedAmount: number;
  cancelledAmount: number;
  /** transaction.status_changed: where the merchant listens, and the transaction as of this change. */
  urlReturn?: string;
  view?: TransactionView;
}
