import type { RebillDetailsView, RebillPaymentView } from './rebill-view';
import type { SaleDetails } from './sale-details';
import type { PayableView, SplitEntryInput, SplitResult } from './split';
import type { Billing, ClearCard } from './tokens';

/** docs/merchants/status-codes.md. */
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

/** docs/merchants/sales.md `operationId`. */
export const OperationIds = { authorize: 1, capture: 2, sale: 3, cancel: 5, report: 6, rebill: 7 } as const;
export type OperationName = keyof typeof OperationIds;

/** docs/merchants/sales.md `method`. */
export const PaymentMethods = { CreditOneShot: 1, CreditMerchantInstalments: 2, CreditIssuerInstalments: 3, Debit: 4 } as const;
export type PaymentMethod = (typeof PaymentMethods)[keyof typeof PaymentMethods];

/** A validated sale/authorize request (docs/merchants/sales.md), amounts in integer cents. */
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
  processor: {
    tid?: string;
    nsu?: string;
    authorizationCode?: string;
    returnCode?: string;
    returnMessage?: string;
    /** The acquirer's own reference for follow-ups (Cielo's PaymentId): recorded, never on the wire. */
    saleRef?: string;
  };
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
   * from this instead of reading it back. A job queued before this snapshot replaced the table row
   * it used to carry has no `merchantId` here: the tokenizer then reads the sale back, as on any
   * later delivery.
   */
  recorded?: SaleSnapshot;
}

/**
 * A sale as recorded, as the workers need it: what deciding it reads (its amount, acquirer,
 * details and version for the compare-and-set) and what its answer shows. Built from the
 * transactions row by the persistence layer, so a migration of that table changes no message.
 */
export interface SaleSnapshot {
  id: string;
  merchantId: string;
  reference: string;
  operation: OperationName;
  status: TransactionStatus;
  statusVersion: number;
  acquirer: number;
  method: number;
  instalments: number;
  currency: string;
  /** Integer cents (below 2^53). */
  amount: number;
  capturedAmount: number;
  cancelledAmount: number;
  maskedCard: string;
  brand: string;
  tokenCard?: string;
  errorCode: string;
  processor: TransactionView['processor'];
  details: SaleDetails;
  urlReturn?: string;
  createdAt: string; // ISO 8601
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
  /** The W3C traceparent of the work that made the change, when it was traced. */
  traceparent?: string;
}
