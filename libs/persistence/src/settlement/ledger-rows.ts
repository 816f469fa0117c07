import { SaleTerms, SplitResult } from '@app/contracts';

// What the payables ledger reads and writes (LedgerRepository): the settlement use-cases build and read these.

/** A transaction's settlement as claimed: what was settled so far, and the split it was settled by. */
export interface SettlementRow {
  transaction_id: string;
  merchant_id: string;
  gross: string;
  fee: string;
  split: SplitResult;
  cancelled: string;
  charged_back: string;
}

/** What settling a capture reads of its transaction: its amounts and the terms the api fixed at the sale. */
export interface CapturedRow {
  id: string;
  merchant_id: string;
  captured_amount: string;
  instalments: number;
  method: number;
  terms?: SaleTerms;
}

/** One payable row to write; a null recipient is the merchant. */
export interface PayableWrite {
  recipientId: string | null;
  instalment: number;
  dueDate: string;
  gross: number;
  fee: number;
  net: number;
}

/** A capture's settlement and its payables, written together or not at all. */
export interface CaptureClaim {
  id: string;
  merchantId: string;
  gross: number;
  fee: number;
  instalments: number;
  split: SplitResult;
  capturedOn: string;
  payables: PayableWrite[];
}

/** Per transaction: the amounts of the transaction, of its settlement, and the sums of its payables per kind. */
export interface LedgerTotalsRow {
  id: string;
  captured: string;
  cancelled: string;
  charged_back: string;
  s_gross: string | null;
  s_fee: string | null;
  s_cancelled: string | null;
  s_cb: string | null;
  cap_gross: string;
  cap_fee: string;
  cancel_gross: string;
  cb_gross: string;
}

/** Per transaction and party: the sums of its capture payables, beside the split they were written from. */
export interface CapturePartyRow {
  transaction_id: string;
  party: string;
  gross: string;
  fee: string;
  net: string;
  expected: SplitResult;
}

/** A capture or cancel the outbox published, and whether its transaction's settlement is behind it. */
export interface PublishedSettlementEvent {
  id: string;
  publishedAt: string;
  event: 'transaction.captured' | 'transaction.cancelled';
  transactionId: string;
  behind: boolean;
}
