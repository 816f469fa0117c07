import type { Job } from 'bullmq';
import { BullMqContext } from './bullmq.context';

const contextOf = (counters: Partial<Pick<Job, 'attemptsStarted' | 'attemptsMade' | 'stalledCounter'>>) =>
  new BullMqContext([{ attemptsStarted: 1, attemptsMade: 0, stalledCounter: 0, ...counters } as Job, 'card.authorize']);

describe('BullMqContext delivery facts', () => {
  it('a job handed out for the first time is a first delivery, attempt 1', () => {
    const ctx = contextOf({});
    expect(ctx.isFirstDelivery()).toBe(true);
    expect(ctx.attempt()).toBe(1);
  });

  it('a job started before, failed before or stalled before is not a first delivery', () => {
    expect(contextOf({ attemptsStarted: 2 }).isFirstDelivery()).toBe(false);
    expect(contextOf({ attemptsStarted: 2, attemptsMade: 1 }).isFirstDelivery()).toBe(false);
    expect(contextOf({ stalledCounter: 1 }).isFirstDelivery()).toBe(false);
    expect(contextOf({ attemptsStarted: 2, attemptsMade: 1 }).attempt()).toBe(2);
  });
});
