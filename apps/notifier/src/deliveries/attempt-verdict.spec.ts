import { MAX_ATTEMPTS } from '@app/webhooks';
import { verdictOf } from './attempt-verdict';

const ID = 'd-1';

describe('verdictOf: what an attempt means for its delivery', () => {
  it('an answer in 2xx succeeds it', () => {
    expect(verdictOf(ID, 1, 1, { durationMs: 5, httpStatus: 200 }, 1)).toEqual({
      next: { status: 'succeeded' },
      counted: 'succeeded',
      outcome: { next: 'done' },
    });
  });

  it('a refused address blocks it, and stops', () => {
    expect(verdictOf(ID, 1, 1, { durationMs: 0, errorClass: 'ssrf_blocked', responseBody: 'private address' }, 1)).toEqual({
      next: { status: 'blocked', error: 'ssrf_blocked: private address' },
      counted: 'blocked',
      outcome: { next: 'stop', reason: 'delivery d-1 blocked: ssrf_blocked: private address' },
    });
  });

  it('410 Gone fails it at once, whatever its place in the schedule', () => {
    expect(verdictOf(ID, 2, 2, { durationMs: 5, httpStatus: 410, errorClass: 'http_status' }, 1)).toEqual({
      next: { status: 'failed', error: 'HTTP 410 Gone: the listener asked us to stop' },
      counted: 'failed',
      outcome: { next: 'stop', reason: 'delivery d-1 failed: HTTP 410' },
    });
  });

  it('the last attempt of the schedule fails it', () => {
    const v = verdictOf(ID, MAX_ATTEMPTS, MAX_ATTEMPTS, { durationMs: 5, errorClass: 'timeout' }, 1);
    expect(v).toEqual({
      next: { status: 'failed', error: 'timeout: ' },
      counted: 'failed',
      outcome: { next: 'stop', reason: 'delivery d-1 failed: timeout: ' },
    });
  });

  it('an earlier failure leaves it pending, due after the schedule wait (or a longer Retry-After)', () => {
    const before = Date.now();
    const v = verdictOf(ID, 1, 1, { durationMs: 5, httpStatus: 503, errorClass: 'http_status', retryAfterMs: 1_000_000 }, 0.001);
    expect(v.counted).toBe('retried');
    expect(v.next).toMatchObject({ status: 'pending', error: 'HTTP 503' });
    expect(v.outcome).toMatchObject({ next: 'retry', reason: 'delivery d-1 attempt 1: HTTP 503' });
    const delayMs = v.outcome.next === 'retry' ? v.outcome.delayMs : -1;
    expect(delayMs).toBeGreaterThan(0);
    expect(v.next.nextAttemptAt!.getTime()).toBeGreaterThanOrEqual(before + delayMs);
  });
});
