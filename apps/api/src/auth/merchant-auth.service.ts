import { Injectable } from '@nestjs/common';
import { createHash, timingSafeEqual } from 'node:crypto';
import { DomainError, ErrorCodes } from '@app/contracts';
import { isMerchantPublicId, isUuid, MerchantRateLimits, MerchantsRepository } from '@app/persistence';
import { ApiConfig } from '../config/api.config';
import { AuthLimits, Budget, RateLimitService, TooManyFailuresError } from '@app/http';

/** Who is calling: the internal id (UUID) and the merchant's own rate limits (null: the defaults). */
export interface AuthenticatedMerchant {
  id: string;
  limits: MerchantRateLimits;
}

type Credentials = AuthenticatedMerchant & { keyHash: Buffer };

interface CachedMerchant {
  found: Credentials;
  expiresAt: number;
}

const NO_HASH = Buffer.alloc(32);
/** Entries each cache holds at most. */
const MAX_CACHED = 10_000;

/**
 * Authenticates `verification` on every /v1 request. `verification.merchantId` is the merchant's
 * public id (10 digits, what merchant:create prints) or, for merchants integrated before public
 * ids, its UUID; either way what it returns, and what everything downstream uses, is the UUID
 * (with the merchant's rate limits, read and cached with its key: an override from
 * merchant:set-limits applies within MERCHANT_CACHE_MS).
 * Unknown merchant and wrong key answer the same 401 so a caller can't probe which merchant ids exist.
 *
 * Ids that name no merchant are remembered in a cache of their own (MERCHANT_NEGATIVE_CACHE_MS,
 * at most MAX_CACHED, the oldest going first), so a flood of made-up ids stays cheap and never
 * evicts a real merchant from the credentials cache (issue 32): only real merchants enter that one.
 */
@Injectable()
export class MerchantAuthService {
  /** Keyed by the id as given (a UUID lower-cased): a merchant may be cached under both of its ids. */
  private readonly cache = new Map<string, CachedMerchant>();
  /** Ids found to name no merchant, to when (ms) that answer holds; in insertion order, the oldest first. */
  private readonly unknown = new Map<string, number>();

  constructor(
    private readonly merchants: MerchantsRepository,
    private readonly config: ApiConfig,
    private readonly limits: RateLimitService,
    private readonly failures?: AuthLimits,
  ) {}

  /**
   * What every /v1 request goes through before anything is recorded: authentication, then one
   * request of the merchant's `budget` (HTTP 429 when it is spent). Unauthenticated callers never
   * spend a merchant's budget. Returns the internal id.
   *
   * `address` is the client's (req.ip): past AUTH_FAILURE_LIMIT failures from it in a window, every
   * request from it is refused with 429 until the window ends, the right key too (see AuthLimits).
   */
  async admit(merchantId: string, merchantKey: string, budget: Budget, address: string): Promise<string> {
    this.failures?.check('v1', address);
    let merchant: AuthenticatedMerchant;
    try {
      merchant = await this.authenticate(merchantId, merchantKey);
    } catch (e) {
      if (e instanceof DomainError && e.code === ErrorCodes.AuthenticationFailed && this.failures) {
        const retryAfterS = await this.failures.failed('v1', address);
        if (retryAfterS !== undefined) throw new TooManyFailuresError(retryAfterS);
      }
      throw e;
    }
    // Usually answered from the replica's lease without a promise (see RateLimitService.admit).
    const fetching = this.limits.admit(merchant, budget);
    if (fetching) await fetching;
    return merchant.id;
  }

  async authenticate(merchantId: string, merchantKey: string): Promise<AuthenticatedMerchant> {
    const given = isUuid(merchantId) ? merchantId.toLowerCase() : merchantId;
    // A malformed id (or a public id whose check digit fails) is never looked up.
    const found = isMerchantPublicId(given) || isUuid(given) ? await this.lookup(given) : null;
    const hash = createHash('sha256').update(merchantKey).digest();
    // Compare even when the merchant is unknown, so both failures take the same time.
    const ok = timingSafeEqual(hash, found?.keyHash ?? NO_HASH) && found !== null;
    if (!ok) {
      throw new DomainError(
        'auth',
        ErrorCodes.AuthenticationFailed,
        'Authentication failed: check verification.merchantId and verification.merchantKey.',
        'verification',
      );
    }
    return { id: found.id, limits: found.limits };
  }

  private async lookup(given: string): Promise<Credentials | null> {
    const now = Date.now();
    const hit = this.cache.get(given);
    if (hit && hit.expiresAt > now) return hit.found;
    const unknownUntil = this.unknown.get(given);
    if (unknownUntil !== undefined && unknownUntil > now) return null;
    const found = (await this.merchants.credentialsOf(given)) ?? null;
    if (found) {
      this.unknown.delete(given);
      if (this.config.merchantCacheMs > 0) {
        if (this.cache.size >= MAX_CACHED) dropExpired(this.cache, now);
        // More live merchants than it holds: start again rather than grow without bound.
        if (this.cache.size >= MAX_CACHED) this.cache.clear();
        this.cache.set(given, { found, expiresAt: now + this.config.merchantCacheMs });
      }
    } else if (this.config.merchantNegativeCacheMs > 0) {
      // Re-inserted at the end: the map's order is the order the entries expire in.
      this.unknown.delete(given);
      if (this.unknown.size >= MAX_CACHED) this.unknown.delete(this.unknown.keys().next().value as string);
      this.unknown.set(given, now + this.config.merchantNegativeCacheMs);
    }
    return found;
  }
}

function dropExpired(cache: Map<string, CachedMerchant>, now: number): void {
  for (const [key, entry] of cache) if (entry.expiresAt <= now) cache.delete(key);
}
