import { dateOfDay, dayNumber, RebillPeriod, RebillPeriods, RebillState, TransactionStatus } from '@app/contracts';

/**
 * The rebill schedule, pure: when each cycle falls due, and where a rebill goes after one of its
 * charges is decided (docs/merchants/rebills.md).
 */

const DAY_MS = 86_400_000;

function daysInMonth(year: number, month0: number): number {
  return new Date(Date.UTC(year, month0 + 1, 0)).getUTCDate();
}

/**
 * The date of cycle `n` (1 is dateStart). Months and years count from the start date's day each
 * time, never from the cycle before: a schedule starting on 31 January charges on 28 (or 29)
 * February, then 31 March again. A yearly one starting on 29 February charges on 28 February in
 * common years.
 */
export function cycleDate(dateStart: string, period: RebillPeriod, frequency: number, n: number): string {
  const steps = (n - 1) * frequency;
  if (period === RebillPeriods.Daily) return dateOfDay(dayNumber(dateStart) + steps);
  if (period === RebillPeriods.Weekly) return dateOfDay(dayNumber(dateStart) + 7 * steps);
  const [y, m, d] = dateStart.split('-').map(Number);
  const months = period === RebillPeriods.Monthly ? steps : 12 * steps;
  const total = m - 1 + months;
  const year = y + Math.floor(total / 12);
  const month0 = total % 12;
  const day = Math.min(d, daysInMonth(year, month0));
  return dateOfDay(Date.UTC(year, month0, day) / DAY_MS);
}

/** How many cycles fall on or before dateEnd. */
export function cycleCount(dateStart: string, period: RebillPeriod, frequency: number, dateEnd: string): number {
  let n = 0;
  while (cycleDate(dateStart, period, frequency, n + 1) <= dateEnd) n++;
  return n;
}

/** A cycle dated `date` falls due at 00:00 UTC of that date, moved by the rebill's shift in whole days. */
export function dueAt(date: string, shiftDays = 0): Date {
  return new Date((dayNumber(date) + shiftDays) * DAY_MS);
}

/**
 * The days a rebill's charges are moved by: a rebill whose start date is already past in UTC
 * (a merchant west of UTC starting it "today" in its evening, accepted down to UTC−12) has every
 * charge fall due that many days after its date's 00:00 UTC. Its first cycle is charged at
 * creation and each later one a whole period after, never the next day's cycle at once.
 */
export function shiftDaysFor(dateStart: string, now = Date.now()): number {
  return Math.max(0, Math.floor(now / DAY_MS) - dayNumber(dateStart));
}

/** The date (YYYY-MM-DD) of the charge falling due at `due` on a rebill moved by `shiftDays`. */
export function chargeDateOf(due: Date, shiftDays = 0): string {
  return dateOfDay(Math.floor(due.getTime() / DAY_MS) - shiftDays);
}

/**
 * Return codes of a decline that retrying cannot cure: expired (54), lost (41), stolen (43),
 * blocked (78), cancelled (14) card, and the gateway's own expired-card check (911).
 */
export const HARD_DECLINE_RETURN_CODES: ReadonlySet<string> = new Set(['14', '41', '43', '54', '78']);
export const HARD_DECLINE_ERROR_CODES: ReadonlySet<string> = new Set(['911']);

export function isHardDecline(cycle: { errorCode: string; returnCode?: string }): boolean {
  return HARD_DECLINE_ERROR_CODES.has(cycle.errorCode) || HARD_DECLINE_RETURN_CODES.has(cycle.returnCode ?? '');
}

/** The schedule fields of a rebill that decide what happens next. */
export interface RebillSchedule {
  period: RebillPeriod;
  frequency: number;
  dateStart: string;
  dateEnd: string;
  /** Days after a cycle's date on which its declined charge is tried again (default 1, 3, 5). */
  retryDays: readonly number[];
  /** See shiftDaysFor (0 for most rebills). */
  shiftDays?: number;
}

export interface CycleOutcome {
  cycle: number;
  attempt: number;
  status: number;
  errorCode: string;
  returnCode?: string;
  /**
   * When the declined charge was actually made. A retry is never sooner after it than the retry
   * schedule's own gap: after an outage, overdue retries are spaced out again instead of made
   * back to back.
   */
  attemptedAt?: Date;
}

export interface NextStep {
  state: RebillState;
  nextCycle: number;
  nextAttempt: number;
  /** When that cycle (or retry) falls due; null when nothing is left to charge. */
  nextDueAt: Date | null;
  /** Why a rebill stopped charging: 'hard_decline' or 'retries_exhausted'. */
  reason?: 'hard_decline' | 'retries_exhausted';
}

/**
 * Whether a decided charge was approved at the acquirer: approved, or cancelled (refunded) in
 * whole or part since, which only an approved charge can be. The merchant may refund a charge by
 * its ticket before its rebill was moved on (a tokenizer that died after the decision, a row
 * another runner held): its cycle was still charged, and must not be charged again.
 */
export function chargedAtAcquirer(status: number): boolean {
  return (
    status === TransactionStatus.Approved ||
    status === TransactionStatus.Authorized ||
    status === TransactionStatus.Cancelled ||
    status === TransactionStatus.PartialCancelled
  );
}

/**
 * What a rebill does after one charge was decided: an approval moves to the next cycle (or
 * completes the schedule), a soft decline is tried again on the retry schedule, a hard decline or
 * a decline with no retry left suspends it.
 */
export function nextStep(s: RebillSchedule, o: CycleOutcome): NextStep {
  if (chargedAtAcquirer(o.status)) {
    const date = cycleDate(s.dateStart, s.period, s.frequency, o.cycle + 1);
    if (date > s.dateEnd) return { state: 'completed', nextCycle: o.cycle + 1, nextAttempt: 0, nextDueAt: null };
    return { state: 'active', nextCycle: o.cycle + 1, nextAttempt: 0, nextDueAt: dueAt(date, s.shiftDays) };
  }
  if (isHardDecline(o)) return { state: 'suspended', nextCycle: o.cycle, nextAttempt: o.attempt, nextDueAt: null, reason: 'hard_decline' };
  if (o.attempt >= s.retryDays.length)
    return { state: 'suspended', nextCycle: o.cycle, nextAttempt: o.attempt, nextDueAt: null, reason: 'retries_exhausted' };
  const date = cycleDate(s.dateStart, s.period, s.frequency, o.cycle);
  const scheduled = dueAt(date, s.shiftDays).getTime() + s.retryDays[o.attempt] * DAY_MS;
  const gap = (s.retryDays[o.attempt] - (o.attempt > 0 ? s.retryDays[o.attempt - 1] : 0)) * DAY_MS;
  const spaced = o.attemptedAt ? o.attemptedAt.getTime() + gap : scheduled;
  return { state: 'active', nextCycle: o.cycle, nextAttempt: o.attempt + 1, nextDueAt: new Date(Math.max(scheduled, spaced)) };
}
