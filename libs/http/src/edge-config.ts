import { isIP } from 'node:net';
import type { BaseConfig, EnvReader } from '@app/platform';

/** Per-merchant request budgets (issue 14 item 7; docs/operations/rate-limits.md). */
export interface RateLimitConfig {
  /** false: no budget is checked at all (for measuring the limiter's cost, or an emergency). */
  enabled: boolean;
  /** Defaults of merchants without an override (merchant:set-limits), in requests per second. */
  writesPerS: number;
  readsPerS: number;
  /** Above its rate, a merchant may spend up to this many seconds' worth of extra requests... */
  burstS: number;
  /** ...in each window of this many seconds. */
  burstWindowS: number;
}

/**
 * Limits on unauthenticated traffic (issue 32; docs/operations/rate-limits.md): failed
 * authentication per client address, and a portal link's opens and replays.
 */
export interface AuthLimitConfig {
  /** AUTH_FAILURE_LIMIT: failed authentications per address and surface in a window before 429 (0: no limit). */
  failures: number;
  /** AUTH_FAILURE_WINDOW_S: the window of the failure count, in seconds. */
  failureWindowS: number;
  /** PORTAL_REPLAY_LIMIT: replays one portal link may ask for per PORTAL_LINK_WINDOW_S (0: no limit). */
  portalReplays: number;
  /** PORTAL_OPEN_LIMIT: opens (/portal/enter) of one portal link per PORTAL_LINK_WINDOW_S (0: no limit). */
  portalOpens: number;
  /** PORTAL_LINK_WINDOW_S */
  portalWindowS: number;
}

/**
 * What the HTTP edge's limiters read of an app's configuration: the api's (merchant budgets and
 * failed authentication) and the console's (failed authentication and portal links; no merchant
 * budgets). Each app provides it as its own config (`useExisting`).
 */
export abstract class EdgeLimitsConfig {
  base: BaseConfig;
  /** Per-merchant budgets; absent (the console) or disabled: none is checked. */
  rateLimits?: RateLimitConfig;
  authLimits: AuthLimitConfig;
}

/** AUTH_FAILURE_LIMIT, AUTH_FAILURE_WINDOW_S and the PORTAL_* limits, read the same way by every web app. */
export function readAuthLimits(r: EnvReader): AuthLimitConfig {
  return {
    failures: r.int('AUTH_FAILURE_LIMIT', 20, 0, 1_000_000),
    failureWindowS: r.int('AUTH_FAILURE_WINDOW_S', 60, 1, 86_400),
    portalReplays: r.int('PORTAL_REPLAY_LIMIT', 10, 0, 1_000_000),
    portalOpens: r.int('PORTAL_OPEN_LIMIT', 20, 0, 1_000_000),
    portalWindowS: r.int('PORTAL_LINK_WINDOW_S', 60, 1, 86_400),
  };
}

/**
 * TRUSTED_PROXIES: the addresses (or CIDR ranges) of the proxies whose X-Forwarded-For names the
 * client (Fastify's trustProxy); empty: the client is the socket's address, X-Forwarded-For ignored.
 */
export function readTrustedProxies(r: EnvReader): string[] {
  return trustedProxies(r.str('TRUSTED_PROXIES', ''), (m) => r.problem(m));
}

/** "10.0.0.1, 10.1.0.0/16, ::1": addresses or CIDR ranges, comma-separated ("" for none). */
export function trustedProxies(text: string, problem: (m: string) => void): string[] {
  const entries = text
    .split(',')
    .map((e) => e.trim())
    .filter((e) => e !== '');
  const bad = entries.filter((e) => {
    const [address, bits, ...rest] = e.split('/');
    const family = isIP(address);
    if (family === 0 || rest.length > 0) return true;
    if (bits === undefined) return false;
    const n = Number(bits);
    return !/^\d{1,3}$/.test(bits) || n > (family === 4 ? 32 : 128);
  });
  if (bad.length)
    problem(
      `TRUSTED_PROXIES must list addresses or CIDR ranges, comma-separated, such as "10.0.0.1, 10.1.0.0/16" (got "${bad.join(', ')}")`,
    );
  return bad.length ? [] : entries;
}
