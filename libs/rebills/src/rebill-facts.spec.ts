import { RebillPeriods } from '@app/contracts';
import { chargeDueDate, scheduledCycles } from './rebill-facts';
import { cycleCount } from './schedule';

describe("a rebill row's schedule facts", () => {
  it('count a schedule as cycleCount does, by arithmetic for days and weeks', () => {
    for (const [period, frequency, start, end] of [
      [RebillPeriods.Daily, 1, '2070-01-01', '2070-01-03'],
      [RebillPeriods.Daily, 7, '2070-01-01', '2071-03-01'],
      [RebillPeriods.Weekly, 1, '2070-01-01', '2070-01-07'],
      [RebillPeriods.Weekly, 2, '2070-01-01', '2070-12-31'],
      [RebillPeriods.Monthly, 1, '2070-01-31', '2070-06-30'],
      [RebillPeriods.Yearly, 1, '2072-02-29', '2080-02-28'],
    ] as const)
      expect(scheduledCycles({ period, frequency, date_start: start, date_end: end })).toBe(cycleCount(start, period, frequency, end));
  });

  it("date a dunning retry's charge its retry day after its cycle's date", () => {
    expect(chargeDueDate({ retry_days: [1, 3, 5] }, { cycle_date: '2070-01-31', attempt: 1 })).toBe('2070-02-01');
    expect(chargeDueDate({ retry_days: [1, 3, 5] }, { cycle_date: '2070-01-31', attempt: 0 })).toBe('2070-01-31');
  });
});
