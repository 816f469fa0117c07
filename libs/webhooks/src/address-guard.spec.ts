import { BlockedAddressError, guardedLookup, isForbidden, parseAllowList } from './address-guard';

describe('webhook address guard (DESIGN.md 3.8)', () => {
  const none = parseAllowList('');

  it.each(['10.1.2.3', '172.16.0.1', '172.31.255.255', '192.168.1.1', '127.0.0.1', '127.9.9.9', '169.254.169.254', '0.0.0.0', '100.64.0.1', '::1', '::', 'fe80::1', 'fd12:3456::1', '::ffff:10.0.0.1', '::ffff:127.0.0.1', '::7f00:1', '::ffff:0:7f00:1'])(
    'refuses %s',
    (ip) => expect(isForbidden(ip, none)).toBe(true),
  );

  it.each(['8.8.8.8', '172.32.0.1', '192.169.0.1', '1.1.1.1', '2606:4700:4700::1111', '::ffff:8.8.8.8'])('allows the public %s', (ip) => expect(isForbidden(ip, none)).toBe(false));

  it('an allowlist opens exactly its networks', () => {
    const allow = parseAllowList('127.0.0.1/32, ::1/128');
    expect(isForbidden('127.0.0.1', allow)).toBe(false);
    expect(isForbidden('::1', allow)).toBe(false);
    expect(isForbidden('127.0.0.2', allow)).toBe(true);
    expect(isForbidden('10.0.0.1', allow)).toBe(true);
  });

  it('rejects an allowlist entry that is not a CIDR', () => {
    expect(() => parseAllowList('localhost')).toThrow(/not a CIDR/);
    expect(() => parseAllowList('10.0.0.0/33')).toThrow(/not a CIDR/);
  });

  it('refuses a name that resolves to a forbidden address, at lookup (connection) time', async () => {
    const lookup = guardedLookup(none);
    const err = await new Promise<Error | null>((resolve) => lookup('localhost', {}, (e) => resolve(e)));
    expect(err).toBeInstanceOf(BlockedAddressError);
    const allowed = guardedLookup(parseAllowList('127.0.0.0/8,::1/128'));
    const address = await new Promise<string>((resolve, reject) => allowed('localhost', {}, (e, a) => (e ? reject(e) : resolve(a as string))));
    expect(['127.0.0.1', '::1']).toContain(address);
  });
});
