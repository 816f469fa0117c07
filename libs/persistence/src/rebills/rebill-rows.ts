import { Billing, RebillPeriod, RebillState, SaleTerms, TransactionView } from '@app/contracts';
import type { NewTransaction, TransactionRow } from '../transactions/transaction-rows';

export interface RebillRow {
  id: string;
  merchant_id: string;
  reference: string;
  state: RebillState;
  period: RebillPeriod;
  frequency: number;
  date_start: string;
  date_end: string;
  retry_days: number[];
  /** See shiftDaysFor (libs/rebills). */
  due_shift_days: number;
  acquirer: number;
  instalments: number;
  currency: string;
  amount: string;
  token_card: string;
  masked_card: string;
  brand: string;
  card_expires: string;
  details: RebillDetails;
  url_return: string | null;
  next_cycle: number;
  next_attempt: number;
  next_due_at: Date | null;
  open_transaction_id: string | null;
  suspended_reason: string | null;
  version: number;
  created_at: Date;
  updated_at: Date;
}

/** What every charge of a rebill is recorded with (a sale's details: terms frozen at creation). */
export interface RebillDetails {
  method: number;
  groupNumber?: string;
  departureTax?: number;
  billing?: Billing;
  fraud?: boolean;
  terms?: SaleTerms;
}

export interface NewRebill {
  id: string;
  merchantId: string;
  reference: string;
  period: RebillPeriod;
  frequency: number;
  dateStart: string;
  dateEnd: string;
  retryDays: readonly number[];
  /** See shiftDaysFor (libs/rebills). */
  shiftDays: number;
  acquirer: number;
  instalments: number;
  currency: string;
  amount: number;
  tokenCard: string;
  maskedCard: string;
  brand: string;
  /** The last day the card is valid (YYYY-MM-DD). */
  cardExpires: string;
  details: RebillDetails;
  urlReturn?: string;
}

/** Where a new rebill starts, as decided for it: when its first cycle falls due, and its first charge when that is opened with it. */
export interface RebillStart {
  nextDueAt: Date;
  openTransactionId: string | null;
}

/** Where a page of a rebill list stopped (newest first: creation time, then id). */
export interface RebillPageCursor {
  /** Best as Postgres prints it (the row's `cursor`): a Date keeps milliseconds only. */
  createdAt: Date | string;
  id: string;
}

/** A rebill as a list shows it: its row, its keyset cursor, and its cycles charged so far. */
export type RebillListRow = RebillRow & {
  /** created_at as Postgres prints it (see RebillPageCursor). */
  cursor: string;
  /** Cycles with an approved charge (8, or 12 once partly cancelled); dunning retries of one cycle count once. */
  cycles_charged: number;
};

export interface CycleRow {
  rebill_id: string;
  cycle: number;
  attempt: number;
  transaction_id: string;
  cycle_date: string;
  merchant_initiated: boolean;
  status: number;
  error_code: string;
  processor: TransactionView['processor'];
  amount: string;
  /** When the charge was opened (the cycle's date, or a retry's, is when it fell due). */
  created_at: Date;
}

/** A charge to open: its transaction, and which cycle (and try of it) of which rebill it is. */
export interface ChargeToOpen {
  tx: NewTransaction;
  rebillId: string;
  cycle: number;
  attempt: number;
  date: string;
  mit: boolean;
}

/** A charge just opened: its transaction (status 0) as recorded, and which cycle it is. */
export interface OpenedCharge {
  rebillId: string;
  merchantId: string;
  transactionId: string;
  tokenCard: string;
  cycle: number;
  attempt: number;
  merchantInitiated: boolean;
  /** The transaction as just recorded (absent for a charge found open later). */
  recorded?: TransactionRow;
}

/** A rebill locked to move on, with its open charge (decided) and that charge's cycle. */
export type AdvanceRow = RebillRow & {
  t_status: number;
  t_error_code: string;
  t_return_code: string | null;
  c_cycle: number;
  c_attempt: number;
  c_opened_at: Date;
};

/** Where a rebill moves on to from its decided charge, as decided for the rebill `r` locked by lockDecided. */
export interface AdvanceWrite {
  r: Pick<RebillRow, 'id'>;
  state: RebillState;
  cycle: number;
  attempt: number;
  due: Date | null;
  reason: string | null;
}

export interface AdvanceResult {
  rebillId: string;
  transactionId: string;
  state: RebillState;
  /** Set when this advance suspended the rebill. */
  suspended?: string;
}
