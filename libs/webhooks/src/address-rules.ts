import { BlockList, isIP } from 'node:net';

/** IPv4 targets a webhook may not reach unless allowed: private, loopback, link-local and the like. */
const FORBIDDEN_V4 = new BlockList();
for (const [net, bits] of [
  ['0.0.0.0', 8],
  ['10.0.0.0', 8],
  ['100.64.0.0', 10],
  ['127.0.0.0', 8],
  ['169.254.0.0', 16],
  ['172.16.0.0', 12],
  ['192.0.0.0', 24],
  ['192.168.0.0', 16],
  ['198.18.0.0', 15],
  ['224.0.0.0', 4],
  ['240.0.0.0', 4],
] as const)
  FORBIDDEN_V4.addSubnet(net, bits, 'ipv4');
/**
 * IPv6 ranges refused as such: unique-local, link-local, site-local, multicast, NAT64's local-use prefix
 * (RFC 8215: its gateway is ours to choose, so where it leads is unknown), 6to4 (2002::/16) and
 * Teredo (2001::/32), whose relays carry the packet to an IPv4 address that may be private. The
 * forms that embed one IPv4 address (mapped, compatible, translated, NAT64 64:ff9b::/96) are
 * judged by that address instead (see embeddedV4).
 */
const FORBIDDEN_V6: ReadonlyArray<readonly [string, number, string]> = [
  ['fc00::', 7, 'a unique-local address'],
  ['fe80::', 10, 'a link-local address'],
  // Deprecated (RFC 3879) but still routed inside the sites that kept it, like unique-local.
  ['fec0::', 10, 'a site-local address'],
  ['ff00::', 8, 'a multicast address'],
  ['64:ff9b:1::', 48, 'a local-use NAT64 address'],
  ['2002::', 16, 'a 6to4 address (it reaches an IPv4 host through a relay)'],
  ['2001::', 32, 'a Teredo address (it reaches an IPv4 host through a relay)'],
];
const FORBIDDEN_V6_LIST = FORBIDDEN_V6.map(([net, bits, why]) => {
  const list = new BlockList();
  list.addSubnet(net, bits, 'ipv6');
  return { list, why };
});

/** `WEBHOOK_ALLOW_NETWORKS`: CIDRs (e.g. `127.0.0.0/8,::1/128`) a webhook may reach despite the rules. */
export function parseAllowList(spec: string): BlockList {
  const list = new BlockList();
  for (const raw of spec
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean)) {
    const [net, bits] = raw.split('/');
    const family = isIP(net);
    const prefix = Number(bits ?? (family === 6 ? 128 : 32));
    if (!family || !Number.isInteger(prefix) || prefix < 0 || prefix > (family === 6 ? 128 : 32))
      throw new Error(`"${raw}" is not a CIDR such as 127.0.0.0/8`);
    list.addSubnet(net, prefix, family === 6 ? 'ipv6' : 'ipv4');
  }
  return list;
}

const LOOPBACK = new BlockList();
LOOPBACK.addSubnet('127.0.0.0', 8, 'ipv4');
LOOPBACK.addAddress('::1', 'ipv6');

/** The entries of an allowlist spec that open loopback (refused in production: see the notifier's config). */
export function loopbackEntries(spec: string): string[] {
  return spec
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean)
    .filter((raw) => {
      const [net] = raw.split('/');
      const one = parseAllowList(raw);
      return LOOPBACK.check(net, isIP(net) === 6 ? 'ipv6' : 'ipv4') || one.check('127.0.0.1', 'ipv4') || one.check('::1', 'ipv6');
    });
}

/** The 16 bytes of an IPv6 address (dotted IPv4 tail and a zone id allowed), or undefined. */
export function ipv6Bytes(address: string): number[] | undefined {
  let a = address.replace(/%.*$/, '');
  if (isIP(a) !== 6) return undefined;
  const v4 = /(\d+)\.(\d+)\.(\d+)\.(\d+)$/.exec(a);
  if (v4) {
    const [b0, b1, b2, b3] = v4.slice(1).map(Number);
    a = `${a.slice(0, v4.index)}${((b0 << 8) | b1).toString(16)}:${((b2 << 8) | b3).toString(16)}`;
  }
  const [head, tail] = a.includes('::') ? a.split('::') : [a, undefined];
  const left = head ? head.split(':') : [];
  const right = tail ? tail.split(':') : [];
  const groups = [...left, ...Array<string>(tail === undefined ? 0 : 8 - left.length - right.length).fill('0'), ...right].map((g) =>
    parseInt(g, 16),
  );
  return groups.flatMap((g) => [g >> 8, g & 0xff]);
}

const hex = (bytes: number[]) => bytes.map((b) => b.toString(16).padStart(2, '0')).join('');

/**
 * The IPv4 address an IPv6 address stands for, when it is one of the forms that carry exactly
 * one: IPv4-mapped ::ffff:a.b.c.d, IPv4-compatible ::a.b.c.d, IPv4-translated ::ffff:0:a.b.c.d,
 * and NAT64 64:ff9b::a.b.c.d (the gateway connects to that IPv4 address).
 */
function embeddedV4(bytes: number[]): string | undefined {
  const prefix = hex(bytes.slice(0, 12));
  if (
    prefix === '00000000000000000000ffff' ||
    prefix === '000000000000000000000000' ||
    prefix === '0000000000000000ffff0000' ||
    prefix === '0064ff9b0000000000000000'
  ) {
    return bytes.slice(12).join('.');
  }
  return undefined;
}

/**
 * One spelling per address, so two forms of one IPv6 address compare equal: IPv6 as its 32 hex
 * digits, anything else as given.
 */
export function canonicalAddress(address: string): string {
  const bytes = ipv6Bytes(address);
  return bytes ? hex(bytes) : address;
}

/**
 * Why a webhook may not reach `address`, or undefined when it may. An address listed in
 * `WEBHOOK_ALLOW_NETWORKS` is always allowed; an IPv6 form that carries an IPv4 address is judged
 * by that IPv4 address (and the allowlist's IPv4 entries apply to it). `isOwnAddress` is asked,
 * with the canonical form, whether an address is the sending host's own (no host: none is).
 */
export function forbiddenReason(
  address: string,
  allow: BlockList,
  isOwnAddress: (canonical: string) => boolean = () => false,
): string | undefined {
  const family = isIP(address.replace(/%.*$/, ''));
  if (family === 4) {
    if (allow.check(address, 'ipv4')) return undefined;
    if (FORBIDDEN_V4.check(address, 'ipv4')) return 'a private, loopback, link-local or reserved address';
    if (isOwnAddress(address)) return "one of the notifier host's own addresses";
    return undefined;
  }
  const bytes = ipv6Bytes(address);
  if (!bytes) return 'not an IP address';
  const plain = address.replace(/%.*$/, '');
  if (allow.check(plain, 'ipv6')) return undefined;
  const v4 = embeddedV4(bytes);
  if (v4) return forbiddenReason(v4, allow, isOwnAddress);
  for (const { list, why } of FORBIDDEN_V6_LIST) if (list.check(plain, 'ipv6')) return why;
  if (isOwnAddress(hex(bytes))) return "one of the notifier host's own addresses";
  return undefined;
}
