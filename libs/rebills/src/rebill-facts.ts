import { dateOfDay, dayNumber, RebillPeriods } from '@app/contracts';
import type { CycleRow, RebillRow } from '@app/persistence';
import { chargeDateOf, cycleCount } from './schedule';

/** What the schedule says of a rebill's row, as the merchant's answers, the console and the CLI show it. */

/** The date of the next charge (a cycle's date, or a retry's day), or undefined when none is scheduled. */
export function nextChargeDate(r: Pick<RebillRow, 'next_due_at' | 'due_shift_days'>): string | undefined {
  return r.next_due_at ? chargeDateOf(new Date(r.next_due_at), r.due_shift_days) : undefined;
}

/**
 * How many cycles the schedule has (cycleCount's answer), by arithmetic for days and weeks: a
 * century of daily cycles counted one by one is too slow for a page of 50 rows.
 */
export function scheduledCycles(r: Pick<RebillRow, 'date_start' | 'date_end' | 'period' | 'frequency'>): number {
  const days = dayNumber(r.date_end) - dayNumber(r.date_start);
  if (r.period === RebillPeriods.Daily) return Math.floor(days / r.frequency) + 1;
  if (r.period === RebillPeriods.Weekly) return Math.floor(days / (7 * r.frequency)) + 1;
  return cycleCount(r.date_start, r.period, r.frequency, r.date_end);
}

/** The day a charge fell due: its cycle's date, plus the retry's days for a dunning retry. */
export function chargeDueDate(r: Pick<RebillRow, 'retry_days'>, c: Pick<CycleRow, 'cycle_date' | 'attempt'>): string {
  const after = c.attempt > 0 ? r.retry_days[c.attempt - 1] : 0;
  return after ? dateOfDay(dayNumber(c.cycle_date) + after) : c.cycle_date;
}

/** The card expires before the schedule ends: later cycles will be declined unless it is replaced. */
export const cardExpiresBeforeEnd = (r: Pick<RebillRow, 'card_expires' | 'date_end'>): boolean => r.card_expires < r.date_end;
