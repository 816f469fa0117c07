import fc from 'fast-check';
import { MAX_ATTEMPTS, parseRetryAfter, RETRY_SCHEDULE_MS, retryDelayMs } from './schedule';

describe('webhook retry schedule (DESIGN.md 4)', () => {
  it('has ten attempts: at once, then 5 s, 5 min, 30 min, 2 h, 5 h, 10 h, 14 h, 20 h, 24 h', () => {
    expect(MAX_ATTEMPTS).toBe(10);
    expect(RETRY_SCHEDULE_MS.map((ms) => ms / 1000)).toEqual([0, 5, 300, 1800, 7200, 18000, 36000, 50400, 72000, 86400]);
  });

  it.each([
    [1, 5_000],
    [2, 300_000],
    [5, 18_000_000],
    [9, 86_400_000],
  ])('after attempt %i waits the scheduled %i ms ±20 %%', (attempts, ms) => {
    expect(retryDelayMs(attempts, 1, undefined, () => 0)).toBe(ms * 0.8);
    expect(retryDelayMs(attempts, 1, undefined, () => 0.5)).toBe(ms);
    const top = retryDelayMs(attempts, 1, undefined, () => 0.999999);
    expect(top).toBeLessThanOrEqual(ms * 1.2);
    expect(top).toBeGreaterThan(ms * 1.2 - 100);
  });

  it('stays within ±20 % of the scaled step for any jitter and scale', () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 1, max: 9 }),
        fc.double({ min: 0, max: 1, maxExcluded: true, noNaN: true }),
        fc.constantFrom(1, 0.01, 0.0001),
        (n, r, scale) => {
          const step = RETRY_SCHEDULE_MS[n] * scale;
          const d = retryDelayMs(n, scale, undefined, () => r);
          expect(d).toBeGreaterThanOrEqual(Math.floor(step * 0.8));
          expect(d).toBeLessThanOrEqual(Math.ceil(step * 1.2));
        },
      ),
    );
  });

  it('honours a longer Retry-After up to the longest step, never a shorter one', () => {
    expect(retryDelayMs(1, 1, 60_000, () => 0.5)).toBe(60_000);
    expect(retryDelayMs(1, 1, 1_000, () => 0.5)).toBe(5_000);
    expect(retryDelayMs(1, 1, 30 * 86_400_000, () => 0.5)).toBe(86_400_000);
    // A compressed schedule compresses the cap too (24 h × 0.001 = 86.4 s).
    expect(retryDelayMs(1, 0.001, 2_000, () => 0.5)).toBe(2_000);
    expect(retryDelayMs(1, 0.001, 600_000, () => 0.5)).toBe(86_400);
  });

  it('reads Retry-After as seconds or as an HTTP date', () => {
    const now = Date.parse('2026-11-23T10:00:00Z');
    expect(parseRetryAfter('120', now)).toBe(120_000);
    expect(parseRetryAfter('Mon, 23 Nov 2026 10:01:00 GMT', now)).toBe(60_000);
    expect(parseRetryAfter('Mon, 23 Nov 2026 09:00:00 GMT', now)).toBe(0);
    expect(parseRetryAfter('soon', now)).toBeUndefined();
    expect(parseRetryAfter(undefined, now)).toBeUndefined();
  });
});
