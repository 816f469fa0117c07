import type { LookupAddress } from 'node:dns';
import { networkInterfaces } from 'node:os';
import { ipv6Bytes, loopbackEntries, parseAllowList } from '../address-rules';
import { BlockedAddressError, guardedLookup, isForbidden, whyForbidden } from './address-guard';

describe('webhook address guard (DESIGN.md 3.8)', () => {
  const none = parseAllowList('');

  it.each([
    '10.1.2.3',
    '172.16.0.1',
    '172.31.255.255',
    '192.168.1.1',
    '127.0.0.1',
    '127.9.9.9',
    '169.254.169.254',
    '0.0.0.0',
    '100.64.0.1',
    '::1',
    '::',
    'fe80::1',
    'fec0::1',
    'feff::1',
    'fd12:3456::1',
    '::ffff:10.0.0.1',
    '::ffff:127.0.0.1',
    '::7f00:1',
    '::ffff:0:7f00:1',
  ])('refuses %s', (ip) => expect(isForbidden(ip, none)).toBe(true));

  it.each(['8.8.8.8', '172.32.0.1', '192.169.0.1', '1.1.1.1', '2606:4700:4700::1111', '::ffff:8.8.8.8'])('allows the public %s', (ip) =>
    expect(isForbidden(ip, none)).toBe(false),
  );

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
    const address = await new Promise<string>((resolve, reject) =>
      allowed('localhost', {}, (e, a) => (e ? reject(e) : resolve(a as string))),
    );
    expect(['127.0.0.1', '::1']).toContain(address);
  });

  describe('forms that carry an IPv4 address, and tunnels (issue 14)', () => {
    it.each([
      ['::ffff:7f00:1', 'mapped loopback, hex form (what new URL() gives for [::ffff:127.0.0.1])'],
      ['::ffff:a00:1', 'mapped 10.0.0.1, hex form'],
      ['::ffff:c0a8:101', 'mapped 192.168.1.1, hex form'],
      ['::a9fe:a9fe', 'compatible 169.254.169.254'],
      ['::ffff:0:a00:1', 'translated 10.0.0.1'],
      ['64:ff9b::10.0.0.1', 'NAT64 of a private address'],
      ['64:ff9b::a9fe:a9fe', 'NAT64 of the metadata address'],
      ['64:ff9b::7f00:1', 'NAT64 of loopback'],
      ['64:ff9b:1::808:808', 'local-use NAT64'],
      ['2002:a00:1::1', '6to4 embedding 10.0.0.1'],
      ['2002:808:808::1', '6to4 embedding a public address (relayed all the same)'],
      ['2002::', '6to4, empty'],
      ['2001:0:4136:e378:8000:63bf:3fff:fdd2', 'Teredo'],
      ['2001::1', 'Teredo, short'],
    ])('refuses %s (%s)', (ip) => expect(isForbidden(ip, none)).toBe(true));

    it.each(['64:ff9b::808:808', '::ffff:808:808', '2001:db9::1', '2001:4860:4860::8888'])(
      'allows %s (public, or a public IPv4 behind NAT64)',
      (ip) => expect(isForbidden(ip, none)).toBe(false),
    );

    it('says why', () => {
      expect(whyForbidden('2002:a00:1::1', none)).toMatch(/6to4/);
      expect(whyForbidden('2001::1', none)).toMatch(/Teredo/);
      expect(whyForbidden('64:ff9b::a00:1', none)).toMatch(/private/);
    });

    it('an allowlist entry opens the form it names, and an IPv4 entry opens the forms that carry that address', () => {
      expect(isForbidden('2002:a00:1::1', parseAllowList('2002::/16'))).toBe(false);
      expect(isForbidden('2002:a00:1::1', parseAllowList('10.0.0.0/8'))).toBe(true);
      expect(isForbidden('::ffff:a00:1', parseAllowList('10.0.0.0/8'))).toBe(false);
      expect(isForbidden('64:ff9b::a00:1', parseAllowList('10.0.0.0/8'))).toBe(false);
    });

    it('parses IPv6 with a dotted tail, a zone and the :: shorthand', () => {
      expect(ipv6Bytes('::ffff:10.0.0.1')).toEqual([0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 255, 255, 10, 0, 0, 1]);
      expect(ipv6Bytes('fe80::1%eth0')).toEqual([0xfe, 0x80, ...Array(13).fill(0), 1]);
      expect(ipv6Bytes('1:2:3:4:5:6:7:8')?.filter((_, i) => i % 2 === 1)).toEqual([1, 2, 3, 4, 5, 6, 7, 8]);
      expect(ipv6Bytes('10.0.0.1')).toBeUndefined();
    });
  });

  describe("the notifier host's own addresses", () => {
    const own = Object.values(networkInterfaces())
      .flat()
      .filter((i) => !!i && !i.internal)
      .map((i) => i!.address);

    it('refuses every address of every interface, not only loopback, unless the allowlist names it', () => {
      // This machine must have an interface besides loopback, or the test would prove nothing.
      expect(own.length).toBeGreaterThan(0);
      for (const address of own) {
        expect(whyForbidden(address, none)).toBeDefined();
        expect(isForbidden(address, parseAllowList(address.includes(':') ? `${address.replace(/%.*$/, '')}/128` : `${address}/32`))).toBe(
          false,
        );
      }
    });

    it('refuses them in their IPv4-mapped form as well', () => {
      for (const address of own.filter((a) => !a.includes(':'))) expect(isForbidden(`::ffff:${address}`, none)).toBe(true);
    });
  });

  describe('DNS answers', () => {
    const answering =
      (addresses: LookupAddress[]) => (_h: string, _o: { all: true }, cb: (e: NodeJS.ErrnoException | null, a: LookupAddress[]) => void) =>
        cb(null, addresses);
    const run = (lookup: ReturnType<typeof guardedLookup>, options: object) =>
      new Promise<{ err: Error | null; address: string | LookupAddress[] }>((resolve) =>
        lookup('hooks.example', options, (err, address) => resolve({ err, address })),
      );

    it('refuses an answer that mixes public and private addresses, whole', async () => {
      const lookup = guardedLookup(
        none,
        answering([
          { address: '93.184.216.34', family: 4 },
          { address: '10.0.0.5', family: 4 },
        ]),
      );
      for (const options of [{}, { all: true }]) {
        const { err, address } = await run(lookup, options);
        expect(err).toBeInstanceOf(BlockedAddressError);
        expect(err?.message).toContain('10.0.0.5');
        expect(address).toEqual([]);
      }
    });

    it('hands the socket exactly the addresses it checked (the connection is pinned to them)', async () => {
      const answer = [
        { address: '93.184.216.34', family: 4 },
        { address: '2606:2800:220:1::1', family: 6 },
      ];
      const lookup = guardedLookup(none, answering(answer));
      expect((await run(lookup, {})).address).toBe('93.184.216.34');
      expect((await run(lookup, { all: true })).address).toEqual(answer);
    });

    it('refuses a 6to4 or NAT64-of-private answer', async () => {
      for (const address of ['2002:a00:1::1', '64:ff9b::a00:5']) {
        const { err } = await run(guardedLookup(none, answering([{ address, family: 6 }])), {});
        expect(err).toBeInstanceOf(BlockedAddressError);
      }
    });
  });

  it('finds the allowlist entries that open loopback (a production notifier refuses them)', () => {
    expect(loopbackEntries('10.0.0.0/8, 127.0.0.1/32,::1/128, 0.0.0.0/0, 127.5.0.0/16, fd00::/8')).toEqual([
      '127.0.0.1/32',
      '::1/128',
      '0.0.0.0/0',
      '127.5.0.0/16',
    ]);
    expect(loopbackEntries('')).toEqual([]);
  });
});
