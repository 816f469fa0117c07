import { Injectable } from '@nestjs/common';
import { PinoLogger } from 'nestjs-pino';
import { RateLimiterRes } from 'rate-limiter-flexible';
import { AuditTrail } from '@app/operators';
import { authBlocked, authFailures, portalLinkLimited } from '@app/platform';
import { AuthLimitConfig, EdgeLimitsConfig } from './edge-config';
import { Limiter, RateLimitService, retryAfterSeconds, TooManyRequestsError } from './rate-limit.service';

/** Where a caller failed to authenticate: each surface counts its failures apart. */
export type AuthSurface = 'v1' | 'console' | 'admin' | 'portal';
const SURFACES: readonly AuthSurface[] = ['v1', 'console', 'admin', 'portal'];

/** A portal link's budgets: its opens (/portal/enter) and its replays. */
export type LinkBudget = 'opens' | 'replays';

/** Too many failed authentications from this address: 429 with Retry-After, whatever the credentials. */
export class TooManyFailuresError extends TooManyRequestsError {
  constructor(retryAfterS: number) {
    super(`Too many failed authentications from this address; nothing was done. Retry after ${retryAfterS} s.`, retryAfterS);
  }
}

/** Blocked addresses kept in memory before lapsed ones are dropped. */
const MAX_BLOCKS = 10_000;

/**
 * What an address is counted by: an IPv4 address as it is (an IPv4-mapped IPv6 one as its IPv4),
 * an IPv6 one by its /64, which one client usually holds whole (counting each address of it apart
 * would give a single client 2^64 budgets).
 */
export function addressKey(ip: string): string {
  const mapped = /^::ffff:(\d{1,3}(?:\.\d{1,3}){3})$/i.exec(ip);
  if (mapped) return mapped[1];
  if (!ip.includes(':')) return ip;
  const [head, tail] = ip.toLowerCase().split('%')[0].split('::');
  const left = head ? head.split(':') : [];
  const right = tail === undefined ? [] : tail ? tail.split(':') : [];
  const groups = tail === undefined ? left : [...left, ...Array<string>(Math.max(0, 8 - left.length - right.length)).fill('0'), ...right];
  return `${groups
    .slice(0, 4)
    .map((g) => g.replace(/^0+(?=.)/, ''))
    .join(':')}::/64`;
}

/**
 * Limits on unauthenticated traffic (issue 32; docs/operations/rate-limits.md, "Failed authentication"):
 *
 * - failed authentications per client address (req.ip: the socket's address, or X-Forwarded-For's
 *   through a proxy of TRUSTED_PROXIES) and surface, AUTH_FAILURE_LIMIT per AUTH_FAILURE_WINDOW_S.
 *   Only failures are counted (a success spends nothing). Past the limit the address is refused
 *   with 429 until the window ends, whatever it sends, so a guess is never answered; the replica
 *   that refuses it remembers that in memory and refuses its next requests without asking Redis.
 *   The first refusal of a window (counted in Redis, so one replica sees it) records one audit
 *   event `auth:blocked`; each failure is only a metric (auth_failures_total), never a row.
 * - a portal link's opens and replays, PORTAL_OPEN_LIMIT and PORTAL_REPLAY_LIMIT per
 *   PORTAL_LINK_WINDOW_S; the first open of a window is the one audited.
 *
 * The counters are RateLimitService's (Redis, rate-limiter-flexible): with Redis down each replica
 * counts on its own (fail open, still limited), and a counter that cannot answer at all admits.
 */
@Injectable()
export class AuthLimits {
  private readonly config: AuthLimitConfig;
  private readonly failures = new Map<AuthSurface, Limiter>();
  private readonly links = new Map<LinkBudget, Limiter>();
  /** `<surface>:<address key>` → until when it is refused (ms). */
  private readonly blocks = new Map<string, number>();

  constructor(
    api: EdgeLimitsConfig,
    limits: RateLimitService,
    private readonly audit: AuditTrail,
    private readonly logger: PinoLogger,
  ) {
    this.config = api.authLimits;
    const { failures, failureWindowS, portalOpens, portalReplays, portalWindowS } = this.config;
    for (const surface of SURFACES) {
      const limiter = failures > 0 ? limits.counter(`authfail:${surface}`, failures, failureWindowS) : undefined;
      if (limiter) this.failures.set(surface, limiter);
    }
    const opens = portalOpens > 0 ? limits.counter('portal:opens', portalOpens, portalWindowS) : undefined;
    const replays = portalReplays > 0 ? limits.counter('portal:replays', portalReplays, portalWindowS) : undefined;
    if (opens) this.links.set('opens', opens);
    if (replays) this.links.set('replays', replays);
  }

  /** The Retry-After (s) while `ip` is refused on `surface` after too many failures; undefined when it is not. From memory only. */
  blocked(surface: AuthSurface, ip: string): number | undefined {
    const key = `${surface}:${addressKey(ip)}`;
    const until = this.blocks.get(key);
    if (until === undefined) return undefined;
    const left = until - Date.now();
    if (left > 0) return retryAfterSeconds(left);
    this.blocks.delete(key);
    return undefined;
  }

  /** Throws TooManyFailuresError while `ip` is refused on `surface`. */
  check(surface: AuthSurface, ip: string): void {
    const s = this.blocked(surface, ip);
    if (s !== undefined) throw new TooManyFailuresError(s);
  }

  /**
   * Counts one failed authentication of `ip` on `surface`: the Retry-After (s) when that took it
   * past the limit (answer 429 instead of 401), else undefined (answer 401). Never throws.
   */
  async failed(surface: AuthSurface, ip: string): Promise<number | undefined> {
    authFailures.inc({ surface });
    const limiter = this.failures.get(surface);
    if (!limiter) return undefined;
    const address = addressKey(ip);
    try {
      await limiter.consume(address, 1);
      return undefined;
    } catch (e: unknown) {
      if (!(e instanceof RateLimiterRes)) {
        this.logger.warn({ err: e }, 'auth failure counter failed; the failure is not counted');
        return undefined;
      }
      this.block(`${surface}:${address}`, e.msBeforeNext);
      // The window's first refusal, wherever it happened: the one recorded.
      if (e.consumedPoints === this.config.failures + 1) await this.recordBlock(surface, ip, address);
      return retryAfterSeconds(e.msBeforeNext);
    }
  }

  /**
   * Spends one of a portal link's `budget`: `retryAfterS` when the link has spent it in this
   * window (answer 429), and whether this was the window's first (the open to audit). Never throws.
   */
  async spendLink(budget: LinkBudget, linkId: string): Promise<{ retryAfterS?: number; first: boolean }> {
    const limiter = this.links.get(budget);
    if (!limiter) return { first: true };
    try {
      const res = await limiter.consume(linkId, 1);
      return { first: res.consumedPoints === 1 };
    } catch (e: unknown) {
      if (!(e instanceof RateLimiterRes)) {
        this.logger.warn({ err: e }, 'portal link counter failed; request admitted');
        return { first: true };
      }
      portalLinkLimited.inc({ what: budget });
      return { retryAfterS: retryAfterSeconds(e.msBeforeNext), first: false };
    }
  }

  private block(key: string, ms: number): void {
    if (this.blocks.size >= MAX_BLOCKS) {
      const now = Date.now();
      for (const [k, until] of this.blocks) if (until <= now) this.blocks.delete(k);
      // Still full (a flood from that many addresses): Redis keeps refusing them all the same.
      if (this.blocks.size >= MAX_BLOCKS) return;
    }
    this.blocks.set(key, Date.now() + ms);
  }

  private async recordBlock(surface: AuthSurface, ip: string, address: string): Promise<void> {
    authBlocked.inc({ surface });
    const { failures, failureWindowS } = this.config;
    this.logger.warn({ surface, address }, 'too many failed authentications: address refused until the window ends');
    try {
      await this.audit.refuse(
        {
          action: 'auth:blocked',
          target: surface,
          origin: `http ${ip}`,
          detail: { surface, address, failures, windowS: failureWindowS },
        },
        'too many failed authentications',
      );
    } catch (e: unknown) {
      // The refusal stands without its row (the metric and the log line have it).
      this.logger.warn({ err: e }, 'auth block not recorded in the audit trail');
    }
  }
}
