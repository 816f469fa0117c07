import { RateLimitedError, retryAfterSeconds } from './rate-limit.service';

describe('rate limit answers', () => {
  it('Retry-After is whole seconds, rounded up, at least 1', () => {
    expect(retryAfterSeconds(0)).toBe(1);
    expect(retryAfterSeconds(1)).toBe(1);
    expect(retryAfterSeconds(999)).toBe(1);
    expect(retryAfterSeconds(1000)).toBe(1);
    expect(retryAfterSeconds(1001)).toBe(2);
    expect(retryAfterSeconds(9_500)).toBe(10);
  });

  it('is a 429 error with its own wire code, naming the budget', () => {
    const e = new RateLimitedError('reads', 3);
    expect(e).toMatchObject({ kind: 'rate_limited', code: '429', retryAfterS: 3 });
    expect(e.message).toBe('Too many report and token/retrieve requests for this merchant; nothing was done. Retry after 3 s.');
  });
});
