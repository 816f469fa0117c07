import { parseLimitOption } from './merchant-limits.command';

describe('merchant:set-limits values', () => {
  it('takes whole numbers from 1 to 1 000 000, "default" (any case) as null, and absent as unchanged', () => {
    expect(parseLimitOption('--reads', '1')).toBe(1);
    expect(parseLimitOption('--reads', ' 250 ')).toBe(250);
    expect(parseLimitOption('--writes', '1000000')).toBe(1_000_000);
    expect(parseLimitOption('--writes', 'default')).toBeNull();
    expect(parseLimitOption('--writes', 'DEFAULT')).toBeNull();
    expect(parseLimitOption('--writes', undefined)).toBeUndefined();
  });

  it.each(['0', '-5', '1.5', '1e3', '1000001', '', 'ten', '0x10', '10/s'])('refuses %j, naming the option', (v) => {
    expect(() => parseLimitOption('--reads', v)).toThrow(
      `--reads must be a whole number of requests per second from 1 to 1000000, or "default" for the api's default (got ${JSON.stringify(v)})`,
    );
  });
});
