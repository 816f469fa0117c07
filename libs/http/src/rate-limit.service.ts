import { Injectable, OnApplicationShutdown, OnModuleInit } from '@nestjs/common';
import { PinoLogger } from 'nestjs-pino';
import { BurstyRateLimiter, RateLimiterMemory, RateLimiterRedis, RateLimiterRes } from 'rate-limiter-flexible';
import { DomainError, ErrorCodes } from '@app/contracts';
import type { MerchantRateLimits } from '@app/persistence';
import { connectRedis, type RedisConnection } from '@app/platform';
import { EdgeLimitsConfig, RateLimitConfig } from './edge-config';

/** The two budgets of a merchant: writes (sale, authorize, capture, cancel, token/add) and reads (report, token/retrieve). */
export type Budget = 'writes' | 'reads';

const WHAT: Record<Budget, string> = {
  writes: 'sale, authorize, capture, cancel and token/add',
  reads: 'report and token/retrieve',
};

/** Any refusal for too many requests: HTTP 429 with code 429 and a Retry-After of `retryAfterS` (whole seconds, at least 1). */
export class TooManyRequestsError extends DomainError {
  constructor(
    message: string,
    readonly retryAfterS: number,
  ) {
    super('rate_limited', ErrorCodes.RateLimited, message);
  }
}

/** Over a merchant's budget (see TooManyRequestsError). */
export class RateLimitedError extends TooManyRequestsError {
  constructor(
    readonly budget: Budget,
    retryAfterS: number,
  ) {
    super(`Too many ${WHAT[budget]} requests for this merchant; nothing was done. Retry after ${retryAfterS} s.`, retryAfterS);
  }
}

/** Whole seconds, at least 1, from the limiter's milliseconds until its window ends. */
export const retryAfterSeconds = (msBeforeNext: number): number => Math.max(1, Math.ceil(msBeforeNext / 1000));

export interface Limiter {
  consume(key: string, points: number): Promise<RateLimiterRes>;
}

/** An app without merchant budgets (the console): none is checked, only AuthLimits' counters. */
const NO_BUDGETS: RateLimitConfig = { enabled: false, writesPerS: 1, readsPerS: 1, burstS: 0, burstWindowS: 1 };

/** A replica takes a merchant's budget from Redis in leases of this fraction of the per-second rate. */
export const LEASES_PER_S = 100;
/** Leases kept before lapsed ones are dropped (one per active merchant and budget). */
const MAX_LEASES = 10_000;

/** What this replica holds of a merchant's budget until `until`: requests left, or a refusal. */
interface Lease {
  left: number;
  until: number;
  /** Set when Redis refused: the Retry-After to answer until the window ends. */
  refusedS?: number;
}

/**
 * Per-merchant request budgets shared by every api replica: counters in Redis, kept by
 * rate-limiter-flexible. A budget is R requests per second (the library's fixed one-second
 * window, started by the first request) plus a burst allowance of R × RATE_LIMIT_BURST_S
 * requests per RATE_LIMIT_BURST_WINDOW_S, spent only when the second's R are gone (the
 * library's BurstyRateLimiter, its stand-in for a token bucket).
 *
 * Cheap admissions and rejections: a replica spends a merchant's budget from leases it takes from
 * Redis (admit), and once Redis says a merchant's window is spent it refuses the rest of that
 * window from memory without asking Redis again, so a merchant flooding the api costs one
 * in-process lookup per refused request and no Redis round trip.
 *
 * Redis down (or slower than a second): every replica falls back to an in-process limiter with
 * the same budget (the library's insuranceLimiter): requests still pass up to the budget per
 * replica, so a merchant may get up to N times its budget across N replicas until Redis is back.
 * Failing closed would turn a Redis outage into a total one for reads that do not need Redis.
 */
@Injectable()
export class RateLimitService implements OnModuleInit, OnApplicationShutdown {
  private readonly config: RateLimitConfig;
  private readonly redis?: RedisConnection;
  private readonly keyPrefix: string;
  /** One limiter per budget and rate: merchants with the same rate share it (the Redis key is per merchant). */
  private readonly limiters = new Map<string, Limiter>();
  private readonly leases = new Map<string, Lease>();
  /** The lease being fetched per merchant and budget: concurrent requests wait for it instead of each asking Redis. */
  private readonly fetching = new Map<string, Promise<void>>();
  private degraded = false;

  constructor(
    api: EdgeLimitsConfig,
    private readonly logger: PinoLogger,
  ) {
    this.config = api.rateLimits ?? NO_BUDGETS;
    this.keyPrefix = `${api.base.queuePrefix}:rl`;
    // The connection serves the merchant budgets and the counters of counter() (AuthLimits).
    const { failures, portalReplays, portalOpens } = api.authLimits;
    if (!this.config.enabled && !failures && !portalReplays && !portalOpens) return;
    // A connection of its own: no offline queue and a short command timeout, so a Redis that is
    // down or stalled sends requests to the in-process fallback at once instead of holding them;
    // auto-pipelining sends the concurrent requests' counter updates in one write.
    this.redis = connectRedis(api.base.redis, {
      lazyConnect: true,
      enableOfflineQueue: false,
      maxRetriesPerRequest: 1,
      commandTimeout: 1_000,
      enableAutoPipelining: true,
    });
    this.redis.on('error', () => this.markDegraded(true));
    this.redis.on('ready', () => this.markDegraded(false));
  }

  onModuleInit(): void {
    // Not awaited: the api starts (and /health says what is down) while Redis is away.
    this.redis?.connect().catch(() => this.markDegraded(true));
  }

  onApplicationShutdown(): void {
    this.redis?.disconnect();
  }

  /**
   * Spends one request of the merchant's `budget`, or throws RateLimitedError (HTTP 429). Called
   * after authentication and before anything is recorded.
   *
   * A replica takes a merchant's budget from Redis in leases of 1/LEASES_PER_S of its rate (at
   * least one request) and spends each lease in memory until the limiter's window ends: one Redis
   * call per lease instead of per request, which is what keeps the limiter's cost on the sale path
   * small. One request fetches a lease while the merchant's other concurrent requests wait for it.
   * A lease's unspent part lapses with its window, so a merchant may be refused up to one lease
   * early per replica (1 % of its rate); under 100 requests per second a lease is one request and
   * the count is exact.
   */
  admit(merchant: { id: string; limits: MerchantRateLimits }, budget: Budget): Promise<void> | undefined {
    if (!this.redis || !this.config.enabled) return undefined;
    const key = `${budget}:${merchant.id}`;
    // The common case, decided without a promise: a lease of this replica's still has requests.
    const lease = this.leases.get(key);
    if (lease && lease.left > 0 && lease.refusedS === undefined && Date.now() < lease.until) {
      lease.left--;
      return undefined;
    }
    return this.admitFromRedis(merchant, budget, key);
  }

  private async admitFromRedis(merchant: { id: string; limits: MerchantRateLimits }, budget: Budget, key: string): Promise<void> {
    const perS =
      (budget === 'writes' ? merchant.limits.writesPerS : merchant.limits.readsPerS) ??
      (budget === 'writes' ? this.config.writesPerS : this.config.readsPerS);
    for (;;) {
      const lease = this.leases.get(key);
      if (lease && Date.now() < lease.until) {
        if (lease.refusedS !== undefined) throw new RateLimitedError(budget, lease.refusedS);
        if (lease.left > 0) {
          lease.left--;
          return;
        }
      }
      const fetching = this.fetching.get(key);
      if (fetching) {
        await fetching;
        continue;
      }
      const fetch = this.lease(key, merchant.id, budget, perS).finally(() => this.fetching.delete(key));
      this.fetching.set(key, fetch);
      await fetch;
    }
  }

  /**
   * Takes the next lease of the merchant's budget from Redis (or the in-process fallback), or records
   * the refusal until its window ends.
   */
  private async lease(key: string, merchantId: string, budget: Budget, perS: number): Promise<void> {
    const size = Math.max(1, Math.floor(perS / LEASES_PER_S));
    try {
      const granted = await this.limiter(budget, perS).consume(merchantId, size);
      // The rate's window is one second; a burst's answer may name its own, longer window.
      this.leases.set(key, { left: size, until: Date.now() + Math.min(granted.msBeforeNext, 1_000) });
    } catch (e: unknown) {
      if (e instanceof RateLimiterRes) {
        this.leases.set(key, { left: 0, until: Date.now() + e.msBeforeNext, refusedS: retryAfterSeconds(e.msBeforeNext) });
        return;
      }
      // Neither Redis nor the in-process fallback answered (not expected): this request goes on.
      this.leases.set(key, { left: 1, until: Date.now() + 1_000 });
      this.logger.warn({ err: e }, 'rate limiter failed; request admitted');
    }
    if (this.leases.size > MAX_LEASES) this.dropLapsedLeases();
  }

  private dropLapsedLeases(): void {
    const now = Date.now();
    for (const [key, lease] of this.leases) if (lease.until <= now) this.leases.delete(key);
  }

  private limiter(budget: Budget, perS: number): Limiter {
    const name = `${budget}:${perS}`;
    let limiter = this.limiters.get(name);
    if (!limiter) {
      const rate = this.store(`${this.keyPrefix}:${budget}`, perS, 1);
      const burstPoints = perS * this.config.burstS;
      limiter =
        burstPoints > 0
          ? new BurstyRateLimiter(rate, this.store(`${this.keyPrefix}:${budget}:burst`, burstPoints, this.config.burstWindowS))
          : rate;
      this.limiters.set(name, limiter);
    }
    return limiter;
  }

  /**
   * A fixed-window counter of `points` per `durationS` per key, shared by every replica through the
   * limiter's Redis connection (keys `<QUEUE_PREFIX>:rl:<name>:…`), failing over to an in-process
   * counter of the same size while Redis is down, as the merchant budgets do. Every consume reaches
   * Redis (no in-memory block): the caller sees each refusal's count (`consumedPoints`).
   * Undefined when nothing needs the connection (every limit off).
   */
  counter(name: string, points: number, durationS: number): Limiter | undefined {
    return this.redis && this.store(`${this.keyPrefix}:${name}`, points, durationS, false);
  }

  private store(keyPrefix: string, points: number, duration: number, blockInMemory = true): RateLimiterRedis {
    return new RateLimiterRedis({
      storeClient: this.redis,
      keyPrefix,
      points,
      duration,
      rejectIfRedisNotReady: true,
      ...(blockInMemory ? { inMemoryBlockOnConsumed: points } : {}),
      insuranceLimiter: new RateLimiterMemory({ keyPrefix, points, duration }),
    });
  }

  private markDegraded(down: boolean): void {
    if (down === this.degraded) return;
    this.degraded = down;
    if (down) this.logger.warn('rate limiter: Redis unavailable; each replica applies the budgets on its own until it is back');
    else this.logger.info('rate limiter: Redis available; budgets are shared by every replica again');
  }
}
