import { lookup as dnsLookup, LookupAddress } from 'node:dns';
import { BlockList, isIP } from 'node:net';

/** Targets a webhook may not reach unless allowed: private, loopback, link-local and the like. */
const FORBIDDEN = new BlockList();
for (const [net, bits] of [
  ['0.0.0.0', 8], ['10.0.0.0', 8], ['100.64.0.0', 10], ['127.0.0.0', 8], ['169.254.0.0', 16], ['172.16.0.0', 12],
  ['192.0.0.0', 24], ['192.168.0.0', 16], ['198.18.0.0', 15], ['224.0.0.0', 4], ['240.0.0.0', 4],
] as const) FORBIDDEN.addSubnet(net, bits, 'ipv4');
// Also the IPv4-compatible (::a.b.c.d) and IPv4-translated (::ffff:0:a.b.c.d) forms, which carry
// an IPv4 address the checks above would otherwise not see.
for (const [net, bits] of [['::', 96], ['::1', 128], ['::ffff:0:0:0', 96], ['fc00::', 7], ['fe80::', 10], ['ff00::', 8], ['64:ff9b::', 96]] as const) FORBIDDEN.addSubnet(net, bits, 'ipv6');

export class BlockedAddressError extends Error {
  override name = 'BlockedAddressError';
  readonly code = 'ESSRFBLOCKED';
}

/** `WEBHOOK_ALLOW_NETWORKS`: CIDRs (e.g. `127.0.0.0/8,::1/128`) a webhook may reach despite the rules. */
export function parseAllowList(spec: string): BlockList {
  const list = new BlockList();
  for (const raw of spec.split(',').map((s) => s.trim()).filter(Boolean)) {
    const [net, bits] = raw.split('/');
    const family = isIP(net);
    const prefix = Number(bits ?? (family === 6 ? 128 : 32));
    if (!family || !Number.isInteger(prefix) || prefix < 0 || prefix > (family === 6 ? 128 : 32)) throw new Error(`"${raw}" is not a CIDR such as 127.0.0.0/8`);
    list.addSubnet(net, prefix, family === 6 ? 'ipv6' : 'ipv4');
  }
  return list;
}

export function isForbidden(address: string, allow: BlockList): boolean {
  const family = isIP(address) === 6 ? 'ipv6' : 'ipv4';
  // An IPv4-mapped IPv6 address (::ffff:10.0.0.1) is judged as the IPv4 address it carries.
  const mapped = family === 'ipv6' && /^::ffff:(\d+\.\d+\.\d+\.\d+)$/i.exec(address);
  if (mapped) return isForbidden(mapped[1], allow);
  return FORBIDDEN.check(address, family) && !allow.check(address, family);
}

type LookupCallback = (err: NodeJS.ErrnoException | null, address: string | LookupAddress[], family?: number) => void;

/**
 * A `lookup` for http(s).request that refuses forbidden addresses. It runs when the socket
 * connects, on the very address it connects to, so a name that resolves to a public address when
 * validated and to a private one later (DNS rebinding) is still refused.
 */
export function guardedLookup(allow: BlockList) {
  return (hostname: string, options: object, callback: LookupCallback): void => {
    dnsLookup(hostname, { ...options, all: true }, (err, addresses) => {
      if (err) return callback(err, []);
      const list = addresses as LookupAddress[];
      const bad = list.find((a) => isForbidden(a.address, allow));
      if (bad) return callback(new BlockedAddressError(`${hostname} resolves to ${bad.address}, a private, loopback or link-local address`), []);
      if ((options as { all?: boolean }).all) return callback(null, list);
      callback(null, list[0].address, list[0].family);
    });
  };
}
