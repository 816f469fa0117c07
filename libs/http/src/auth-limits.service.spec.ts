import { trustedProxies } from './edge-config';
import { addressKey } from './auth-limits.service';

describe('limits on failed authentication: addresses', () => {
  it('counts an IPv4 address as it is, an IPv4-mapped one as its IPv4, and an IPv6 one by its /64', () => {
    expect(addressKey('203.0.113.7')).toBe('203.0.113.7');
    expect(addressKey('::ffff:203.0.113.7')).toBe('203.0.113.7');
    expect(addressKey('2001:db8:1:2:3:4:5:6')).toBe('2001:db8:1:2::/64');
    expect(addressKey('2001:0db8:0001:0002::9')).toBe('2001:db8:1:2::/64');
    expect(addressKey('2001:db8::1')).toBe('2001:db8:0:0::/64');
    expect(addressKey('2001:DB8::2')).toBe(addressKey('2001:db8::1'));
    expect(addressKey('::1')).toBe('0:0:0:0::/64');
    expect(addressKey('fe80::1%eth0')).toBe('fe80:0:0:0::/64');
  });

  it('TRUSTED_PROXIES: addresses and CIDR ranges, comma-separated; anything else is named', () => {
    const problems: string[] = [];
    const problem = (m: string) => problems.push(m);
    expect(trustedProxies('', problem)).toEqual([]);
    expect(trustedProxies(' 10.0.0.1, 10.1.0.0/16 ,::1, fd00::/8', problem)).toEqual(['10.0.0.1', '10.1.0.0/16', '::1', 'fd00::/8']);
    expect(problems).toEqual([]);
    expect(trustedProxies('10.0.0.1, proxy.local, 10.0.0.0/33, ::1/129', problem)).toEqual([]);
    expect(problems).toEqual([
      'TRUSTED_PROXIES must list addresses or CIDR ranges, comma-separated, such as "10.0.0.1, 10.1.0.0/16" (got "proxy.local, 10.0.0.0/33, ::1/129")',
    ]);
  });
});
