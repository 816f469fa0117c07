import { parseThrottle, throttleBucket, throttleShown, WEBHOOK_THROTTLE_RANGE } from './throttle';

describe('webhook throttle values', () => {
  it('takes whole numbers from 1 to 10 000 and "off" (any case, spaces around) as none', () => {
    expect(parseThrottle('1')).toBe(1);
    expect(parseThrottle(' 250 ')).toBe(250);
    expect(parseThrottle('10000')).toBe(WEBHOOK_THROTTLE_RANGE.max);
    expect(parseThrottle('off')).toBeNull();
    expect(parseThrottle(' OFF ')).toBeNull();
  });

  it.each(['0', '-5', '1.5', '1e3', '10001', '00000000001', '', 'ten', '0x10', '5/s', 'none'])('refuses %j', (v) => {
    expect(parseThrottle(v)).toBeUndefined();
  });

  it('shows none as "off"', () => {
    expect(throttleShown(null)).toBe('off');
    expect(throttleShown(7)).toBe(7);
  });
});

describe('webhook throttle bucket', () => {
  it('hands a token out every 1/perS s, rounded up to the microsecond so never faster than perS', () => {
    expect(throttleBucket(5).intervalUs).toBe(200_000);
    expect(throttleBucket(3).intervalUs).toBe(333_334);
    expect(throttleBucket(10_000).intervalUs).toBe(100);
    for (const perS of [1, 3, 7, 19, 999, 10_000]) expect(1_000_000 / throttleBucket(perS).intervalUs).toBeLessThanOrEqual(perS);
  });

  it('holds one token below 20/s (any second at most perS) and a tenth of a second of them above', () => {
    expect(throttleBucket(1).burst).toBe(1);
    expect(throttleBucket(19).burst).toBe(1);
    expect(throttleBucket(20).burst).toBe(2);
    expect(throttleBucket(10_000).burst).toBe(1_000);
  });
});
