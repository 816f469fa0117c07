import { canonicalAddress, forbiddenReason, parseAllowList } from './address-rules';

describe('webhook address rules (pure)', () => {
  const none = parseAllowList('');

  it('judges by the rules alone when no host is named', () => {
    expect(forbiddenReason('10.0.0.1', none)).toMatch(/private/);
    expect(forbiddenReason('8.8.8.8', none)).toBeUndefined();
    expect(forbiddenReason('2606:4700:4700::1111', none)).toBeUndefined();
    expect(forbiddenReason('not-an-ip', none)).toBe('not an IP address');
  });

  it("refuses the host's own addresses, asked in canonical form, IPv4 and IPv6 alike", () => {
    const own = new Set([canonicalAddress('203.0.113.7'), canonicalAddress('2001:db8::7')]);
    const isOwn = (a: string) => own.has(a);
    expect(forbiddenReason('203.0.113.7', none, isOwn)).toMatch(/own addresses/);
    expect(forbiddenReason('::ffff:203.0.113.7', none, isOwn)).toMatch(/own addresses/);
    expect(forbiddenReason('2001:0db8:0:0:0:0:0:7', none, isOwn)).toMatch(/own addresses/);
    expect(forbiddenReason('203.0.113.7', parseAllowList('203.0.113.7/32'), isOwn)).toBeUndefined();
  });

  it('spells one IPv6 address one way, and leaves IPv4 as given', () => {
    expect(canonicalAddress('2001:db8::7')).toBe(canonicalAddress('2001:0db8:0000:0000:0000:0000:0000:0007'));
    expect(canonicalAddress('2001:db8::7')).toBe('20010db8000000000000000000000007');
    expect(canonicalAddress('203.0.113.7')).toBe('203.0.113.7');
  });
});
