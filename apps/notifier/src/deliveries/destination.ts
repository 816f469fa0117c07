import { isIP } from 'node:net';
import { parse } from 'tldts';

/**
 * What the per-destination cap counts a listener against: its registrable domain
 * (hooks.shop.example.co.uk and api.example.co.uk are both example.co.uk; a private suffix such as
 * github.io counts each site on it apart), else its host name; never its port, so a merchant
 * spreading listeners over ports or subdomains of one server still gets one server's share. IP
 * literals, localhost and single-label names are keyed by themselves. `host` is a URL's host, with
 * or without its port (what delivery jobs carry), or a whole URL.
 */
export function destinationKey(host: string): string {
  let hostname: string;
  try {
    hostname = new URL(host.includes('://') ? host : `http://${host}`).hostname.toLowerCase();
  } catch {
    return host.toLowerCase();
  }
  hostname = hostname.replace(/^\[|\]$/g, '').replace(/\.$/, '');
  if (isIP(hostname) || hostname === 'localhost') return hostname;
  return parse(hostname, { allowPrivateDomains: true }).domain ?? hostname;
}
