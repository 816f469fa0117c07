import type { Billing } from './tokens';
import { RebillDetailsView, RebillPaymentView, RebillPeriod } from './rebill-view';
import { SaleInput, TransactionView } from './transactions';

/** A validated `rebill` request (docs/merchants/rebills.md), amounts in integer cents, dates as YYYY-MM-DD. */
export interface RebillInput {
  order: { reference: string; totalAmount: number; period: RebillPeriod; frequency: number; dateStart: string; dateEnd: string };
  /** A sale's payment without what a rebill does not send (method, softDescriptor) or decides itself (the card is always vaulted). */
  payment: Omit<SaleInput['payment'], 'method' | 'softDescriptor' | 'saveCreditCard' | 'generateToken'>;
  billing?: Billing;
  urlReturn?: string;
  fraud: boolean;
}

const DAY_MS = 86_400_000;

/** "2027-01-31" as days since 1970-01-01 (UTC calendar arithmetic, no time zones involved). */
export function dayNumber(date: string): number {
  const [y, m, d] = date.split('-').map(Number);
  return Date.UTC(y, m - 1, d) / DAY_MS;
}

export function dateOfDay(day: number): string {
  return new Date(day * DAY_MS).toISOString().slice(0, 10);
}

/** Whether the text is a real calendar date written YYYY-MM-DD. */
export function isCalendarDate(text: string): boolean {
  if (!/^\d{4}-\d{2}-\d{2}$/.test(text)) return false;
  return dateOfDay(dayNumber(text)) === text;
}

export type RebillView = TransactionView & { payments: RebillPaymentView[]; rebill: RebillDetailsView };
