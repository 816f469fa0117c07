import { createHmac, hkdfSync, timingSafeEqual } from 'node:crypto';

/**
 * Merchant portal links (merchant:portal-link): a link's token and the portal's session cookie,
 * each an HMAC-SHA256 over `<link id>.<merchant id>.<expiry, epoch seconds>`.
 *
 * Both keys are derived from PORTAL_LINK_KEY with HKDF-SHA256 under distinct labels, so the key is
 * never used raw, a link token is never accepted as a session cookie (or the other way round), and
 * neither shares a key with the console's session (CONSOLE_SESSION_KEY). The portal's CSRF tokens
 * and flash notices are HMACs bound to the link id under a third key derived the same way, with a
 * label of its own (apps/api/src/console/page-tokens.ts). The signature only says
 * the gateway issued the claims: the portal also checks the expiry and the link's row (issued, not
 * revoked) on every request.
 */
export type PortalSealPurpose = 'link' | 'session';

export interface PortalClaims {
  linkId: string;
  /** The merchant's public id (what merchant:create printed), never another id: the link is read by the merchant. */
  merchantId: string;
  expiresAt: Date;
}

export interface PortalKeys {
  readonly link: Buffer;
  readonly session: Buffer;
}

const LABELS: Record<PortalSealPurpose, string> = { link: 'gateway portal link token v1', session: 'gateway portal session cookie v1' };
const UUID = '[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}';
/** The merchant as it knows itself: its public id (10 digits), or the UUID of a merchant from before public ids. */
const CLAIMS = new RegExp(`^(${UUID})\\.(\\d{10}|${UUID})\\.(\\d{1,12})$`);

export function portalKeys(secret: string): PortalKeys {
  const derive = (purpose: PortalSealPurpose) => Buffer.from(hkdfSync('sha256', secret, Buffer.alloc(0), LABELS[purpose], 32));
  return { link: derive('link'), session: derive('session') };
}

const macOf = (key: Buffer, payload: string) => createHmac('sha256', key).update(payload).digest();

/** `<base64url claims>.<base64url HMAC>`: URL- and cookie-safe. */
export function sealPortal(keys: PortalKeys, purpose: PortalSealPurpose, c: PortalClaims): string {
  const payload = `${c.linkId.toLowerCase()}.${c.merchantId.toLowerCase()}.${Math.floor(c.expiresAt.getTime() / 1000)}`;
  return `${Buffer.from(payload).toString('base64url')}.${macOf(keys[purpose], payload).toString('base64url')}`;
}

/**
 * The claims of a sealed value whose HMAC checks (in constant time) and which has not expired at
 * `nowMs`; 'invalid' for anything else made or changed by someone else, 'expired' for a genuine
 * one past its expiry.
 */
export function openPortal(
  keys: PortalKeys,
  purpose: PortalSealPurpose,
  sealed: string,
  nowMs = Date.now(),
): PortalClaims | 'invalid' | 'expired' {
  const m = /^([A-Za-z0-9_-]{1,200})\.([A-Za-z0-9_-]{43})$/.exec(sealed);
  if (!m) return 'invalid';
  const payload = Buffer.from(m[1], 'base64url').toString('utf8');
  const given = Buffer.from(m[2], 'base64url');
  const expected = macOf(keys[purpose], payload);
  if (given.length !== expected.length || !timingSafeEqual(given, expected)) return 'invalid';
  const c = CLAIMS.exec(payload);
  if (!c) return 'invalid';
  const expiresAt = new Date(Number(c[3]) * 1000);
  if (expiresAt.getTime() <= nowMs) return 'expired';
  return { linkId: c[1], merchantId: c[2], expiresAt };
}

const TTL_UNITS: Record<string, number> = { s: 1, m: 60, h: 3600, d: 86_400 };
/** The longest a link may live. */
export const PORTAL_LINK_MAX_TTL_S = 7 * 86_400;

/** `--ttl` as seconds: a whole number and a unit (s, m, h, d), 1 s to 7 d; a sentence naming --ttl when it is not one. */
export function parsePortalTtl(given: string): number | string {
  const m = /^(\d{1,7})([smhd])$/.exec(given.trim());
  if (!m) return `--ttl: ${JSON.stringify(given)} is not a duration such as 30m, 1h or 24h (a number and s, m, h or d)`;
  const seconds = Number(m[1]) * TTL_UNITS[m[2]];
  if (seconds < 1 || seconds > PORTAL_LINK_MAX_TTL_S) return `--ttl: ${given} is outside 1s to 7d`;
  return seconds;
}
