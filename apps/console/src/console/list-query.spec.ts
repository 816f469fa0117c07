import { cursorSealer } from './list-query';
import { isPgTime } from './deliveries.routes';

describe('page links', () => {
  it('a sealed cursor opens only where it was sealed, carries nothing in clear, and refuses any change', () => {
    const mine = cursorSealer('k'.repeat(32));
    const other = cursorSealer('j'.repeat(32));
    const key = [1, 3, '00000000-0000-0000-0000-000000000000', 'https://4111111111111111.example:443'];
    const sealed = mine.seal(key);
    expect(mine.open(sealed, 4)).toEqual(key);
    expect(Buffer.from(sealed, 'base64url').toString('latin1')).not.toContain('4111111111111111');
    expect(other.open(sealed, 4)).toBeNull();
    expect(mine.open(sealed, 3)).toBeNull();
    const raw = Buffer.from(sealed, 'base64url');
    raw[raw.length - 1] ^= 1;
    expect(mine.open(raw.toString('base64url'), 4)).toBeNull();
    expect(mine.open('%%%', 4)).toBeNull();
    expect(mine.open('', 4)).toBeNull();
    expect(mine.open(Buffer.from(JSON.stringify(key)).toString('base64url'), 4)).toBeNull();
  });

  it('a keyset time is one Postgres reads back: real dates, times and offsets only', () => {
    expect(isPgTime('2026-11-25 17:00:00.123456+00')).toBe(true);
    expect(isPgTime('2026-11-25 17:00:00-03:30')).toBe(true);
    expect(isPgTime('2024-02-29 23:59:59+00')).toBe(true);
    for (const bad of [
      '2026-02-30 00:00:00+00',
      '2025-02-29 00:00:00+00',
      '2026-13-01 00:00:00+00',
      '2026-11-25 24:00:00+00',
      '2026-11-25 23:60:00+00',
      '2026-11-25 23:59:60+00',
      '2026-11-25 17:00:00+20',
      '2026-11-25 17:00:00+05:60',
      '1969-12-31 23:59:59+00',
      '2026-11-25T17:00:00Z',
      '2026-11-25 17:00:00',
    ])
      expect([bad, isPgTime(bad)]).toEqual([bad, false]);
  });
});
