import { lookup as dnsLookup, LookupAddress } from 'node:dns';
import type { BlockList } from 'node:net';
import { networkInterfaces } from 'node:os';
import { canonicalAddress, forbiddenReason } from '../address-rules';

export class BlockedAddressError extends Error {
  override name = 'BlockedAddressError';
  readonly code = 'ESSRFBLOCKED';
}

/** The host's own addresses, every interface (not only loopback): re-read at most once a second. */
const LOCAL_TTL_MS = 1_000;
let local: { at: number; addresses: Set<string> } = { at: -Infinity, addresses: new Set() };

export function localAddresses(now = Date.now()): ReadonlySet<string> {
  if (now - local.at >= LOCAL_TTL_MS) {
    const addresses = new Set<string>();
    for (const list of Object.values(networkInterfaces())) for (const i of list ?? []) addresses.add(canonicalAddress(i.address));
    local = { at: now, addresses };
  }
  return local.addresses;
}

/**
 * Why a webhook may not reach `address` from this host, or undefined when it may: the address
 * rules, plus the host's own addresses on every interface.
 */
export function whyForbidden(address: string, allow: BlockList): string | undefined {
  return forbiddenReason(address, allow, (canonical) => localAddresses().has(canonical));
}

export function isForbidden(address: string, allow: BlockList): boolean {
  return whyForbidden(address, allow) !== undefined;
}

type LookupCallback = (err: NodeJS.ErrnoException | null, address: string | LookupAddress[], family?: number) => void;
type Resolver = (
  hostname: string,
  options: { all: true },
  callback: (err: NodeJS.ErrnoException | null, addresses: LookupAddress[]) => void,
) => void;

/**
 * A `lookup` for http(s).request that refuses forbidden addresses. It runs when the socket
 * connects, and the socket connects to the addresses it returns, so the connection is pinned to
 * what was checked: a name that resolves to a public address when validated and to a private one
 * later (DNS rebinding) is still refused, and an answer that mixes public and forbidden addresses
 * is refused whole (a client falling back to the next address must not reach the forbidden one).
 */
export function guardedLookup(allow: BlockList, resolve: Resolver = dnsLookup) {
  return (hostname: string, options: object, callback: LookupCallback): void => {
    resolve(hostname, { ...options, all: true }, (err, addresses) => {
      if (err) return callback(err, []);
      const list = addresses;
      if (list.length === 0) return callback(Object.assign(new Error(`${hostname} has no address`), { code: 'ENOTFOUND' }), []);
      for (const a of list) {
        const why = whyForbidden(a.address, allow);
        if (why) return callback(new BlockedAddressError(`${hostname} resolves to ${a.address}, ${why}`), []);
      }
      if ((options as { all?: boolean }).all) return callback(null, list);
      callback(null, list[0].address, list[0].family);
    });
  };
}
