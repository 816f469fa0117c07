/** The rebill types the TransactionView carries (kept apart from rebills.ts, which builds on transactions.ts). */

/** docs/merchants/rebills.md `period`: 1 daily, 2 weekly, 3 monthly, 4 yearly. */
export const RebillPeriods = { Daily: 1, Weekly: 2, Monthly: 3, Yearly: 4 } as const;
export type RebillPeriod = (typeof RebillPeriods)[keyof typeof RebillPeriods];

export type RebillState = 'active' | 'suspended' | 'cancelled' | 'completed';

/** One cycle as report and the webhook show it (processor.payments["n"].payment). */
export interface RebillPaymentView {
  cycle: number;
  /** The cycle's date (YYYY-MM-DD). */
  date: string;
  /** The charge's own transaction (upper-case GUID): report, cancel it as a sale. */
  ticket: string;
  tid: string;
  amount: number;
  /** The charge's transaction status (a TransactionStatus). */
  status: number;
  errorCode: string;
  returnCode: string;
  returnMessage: string;
  /** 0 for the first try, 1.. for dunning retries (the view shows a cycle's latest). */
  attempt: number;
}

export interface RebillDetailsView {
  state: RebillState;
  period: RebillPeriod;
  frequency: number;
  dateStart: string;
  dateEnd: string;
  /** The date of the next charge (cycle or retry), if one is scheduled. */
  nextDate?: string;
  cycles: number;
  /** The card's expiry falls before dateEnd: later cycles will be declined unless it is replaced. */
  cardExpiresBeforeEnd: boolean;
  suspendedReason?: string;
}
