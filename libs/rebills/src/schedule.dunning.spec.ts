import { RebillPeriods } from '@app/contracts';
import { nextStep, RebillSchedule } from './schedule';

const schedule: RebillSchedule = {
  period: RebillPeriods.Monthly,
  frequency: 1,
  dateStart: '2031-03-01',
  dateEnd: '2031-12-31',
  retryDays: [1, 3, 5],
};
const declined = { cycle: 1, status: 4, errorCode: '', returnCode: '05' };
const day = 86_400_000;

describe('dunning after an outage', () => {
  it('a retry falls on its scheduled day when the charge before it was made on time (or earlier, as with --as-of)', () => {
    const onTime = nextStep(schedule, { ...declined, attempt: 1, attemptedAt: new Date('2031-03-02T00:00:00Z') });
    expect(onTime.nextDueAt).toEqual(new Date('2031-03-04T00:00:00Z'));
    const early = nextStep(schedule, { ...declined, attempt: 1, attemptedAt: new Date('2026-11-27T10:00:00Z') });
    expect(early.nextDueAt).toEqual(new Date('2031-03-04T00:00:00Z'));
  });

  it('overdue retries are spaced out by the schedule’s gaps from when the charge before was actually made', () => {
    // The tokenizers were down until 10 March: the first try is made then, not on 1 March.
    const first = nextStep(schedule, { ...declined, attempt: 0, attemptedAt: new Date('2031-03-10T08:00:00Z') });
    expect(first.nextDueAt).toEqual(new Date(Date.parse('2031-03-10T08:00:00Z') + day));
    const second = nextStep(schedule, { ...declined, attempt: 1, attemptedAt: new Date('2031-03-11T08:00:00Z') });
    expect(second.nextDueAt).toEqual(new Date(Date.parse('2031-03-11T08:00:00Z') + 2 * day));
    const third = nextStep(schedule, { ...declined, attempt: 2, attemptedAt: new Date('2031-03-13T08:00:00Z') });
    expect(third.nextDueAt).toEqual(new Date(Date.parse('2031-03-13T08:00:00Z') + 2 * day));
    expect(nextStep(schedule, { ...declined, attempt: 3, attemptedAt: new Date('2031-03-15T08:00:00Z') })).toMatchObject({
      state: 'suspended',
      reason: 'retries_exhausted',
    });
  });
});
