import { isCalendarDate, RebillPeriods, TransactionStatus } from '@app/contracts';
import { cycleDate, dueAt, nextStep, RebillSchedule } from './schedule';

const monthly: RebillSchedule = {
  period: RebillPeriods.Monthly,
  frequency: 1,
  dateStart: '2027-01-31',
  dateEnd: '2027-12-31',
  retryDays: [1, 3, 5],
};

describe('rebill schedule math', () => {
  it('months count from the start day: 31 January charges on the last day of shorter months, then on the 31st again', () => {
    const dates = Array.from({ length: 5 }, (_, i) => cycleDate('2028-01-31', RebillPeriods.Monthly, 1, i + 1));
    expect(dates).toEqual(['2028-01-31', '2028-02-29', '2028-03-31', '2028-04-30', '2028-05-31']);
  });

  it('a yearly rebill from 29 February charges on 28 February in common years and on the 29th in leap years', () => {
    const dates = Array.from({ length: 5 }, (_, i) => cycleDate('2028-02-29', RebillPeriods.Yearly, 1, i + 1));
    expect(dates).toEqual(['2028-02-29', '2029-02-28', '2030-02-28', '2031-02-28', '2032-02-29']);
  });

  it('every 5 months across year ends; weekly and daily by days', () => {
    expect(cycleDate('2027-10-31', RebillPeriods.Monthly, 5, 2)).toBe('2028-03-31');
    expect(cycleDate('2027-10-31', RebillPeriods.Monthly, 5, 3)).toBe('2028-08-31');
    expect(cycleDate('2027-12-28', RebillPeriods.Weekly, 1, 2)).toBe('2028-01-04');
    expect(cycleDate('2028-02-28', RebillPeriods.Daily, 1, 2)).toBe('2028-02-29');
  });

  it('refuses dates that do not exist', () => {
    expect(isCalendarDate('2027-02-29')).toBe(false);
    expect(isCalendarDate('2028-02-29')).toBe(true);
    expect(isCalendarDate('2027-13-01')).toBe(false);
  });

  it('an approval moves to the next cycle; a soft decline is retried on the retry days; a hard decline suspends', () => {
    const approved = nextStep(monthly, { cycle: 1, attempt: 0, status: TransactionStatus.Approved, errorCode: '' });
    expect(approved).toMatchObject({ state: 'active', nextCycle: 2, nextAttempt: 0, nextDueAt: dueAt('2027-02-28') });
    const soft = nextStep(monthly, { cycle: 2, attempt: 1, status: TransactionStatus.Unauthorized, errorCode: '', returnCode: '05' });
    expect(soft).toMatchObject({ state: 'active', nextCycle: 2, nextAttempt: 2, nextDueAt: new Date('2027-03-03T00:00:00Z') });
    const hard = nextStep(monthly, { cycle: 2, attempt: 0, status: TransactionStatus.Unauthorized, errorCode: '', returnCode: '78' });
    expect(hard).toMatchObject({ state: 'suspended', reason: 'hard_decline', nextDueAt: null });
  });

  // A charge is cancelled (refunded) by its ticket as any sale; the merchant can do it as soon as
  // its webhook arrives, before the rebill was moved on (the tokenizer died after recording the
  // decision, or the rebill's row was locked by a cancel). The charge was approved at the
  // acquirer: its cycle is paid, and must not be charged again as a "declined" retry.
  it.each([TransactionStatus.Cancelled, TransactionStatus.PartialCancelled])(
    'a charge approved then cancelled (status %s) before the rebill moved on counts as charged: the rebill moves to the next cycle',
    (status) => {
      const next = nextStep(monthly, { cycle: 1, attempt: 0, status, errorCode: '' });
      expect(next).toMatchObject({ state: 'active', nextCycle: 2, nextAttempt: 0, nextDueAt: dueAt('2027-02-28') });
    },
  );
});
