import { Injectable } from '@nestjs/common';
import { createHash, timingSafeEqual } from 'node:crypto';
import { DomainError, ErrorCodes } from '@app/contracts';
import { isMerchantPublicId, isUuid, MerchantsRepository } from '@app/persistence';
import { ApiConfig } from '../config/api.config';

interface CachedMerchant {
  /** null: no such merchant (cached too, so a flood of bad ids stays cheap). */
  found: { id: string; keyHash: Buffer } | null;
  expiresAt: number;
}

const NO_HASH = Buffer.alloc(32);

/**
 * Authenticates `verification` on every /v1 request. `verification.merchantId` is the merchant's
 * public id (10 digits, what merchant:create prints) or, for merchants integrated before public
 * ids, its UUID; either way what it returns, and what everything downstream uses, is the UUID.
 * Unknown merchant and wrong key answer the same 401 so a caller can't probe which merchant ids exist.
 */
@Injectable()
export class MerchantAuthService {
  /** Keyed by the id as given (a UUID lower-cased): a merchant may be cached under both of its ids. */
  private readonly cache = new Map<string, CachedMerchant>();

  constructor(
    private readonly merchants: MerchantsRepository,
    private readonly config: ApiConfig,
  ) {}

  async authenticate(merchantId: string, merchantKey: string): Promise<string> {
    const given = isUuid(merchantId) ? merchantId.toLowerCase() : merchantId;
    // A malformed id (or a public id whose check digit fails) is never looked up.
    const found = isMerchantPublicId(given) || isUuid(given) ? await this.lookup(given) : null;
    const hash = createHash('sha256').update(merchantKey).digest();
    // Compare even when the merchant is unknown, so both failures take the same time.
    const ok = timingSafeEqual(hash, found?.keyHash ?? NO_HASH) && found !== null;
    if (!ok) {
      throw new DomainError('auth', ErrorCodes.AuthenticationFailed, 'Authentication failed: check verification.merchantId and verification.merchantKey.', 'verification');
    }
    return found.id;
  }

  private async lookup(given: string): Promise<CachedMerchant['found']> {
    const now = Date.now();
    const hit = this.cache.get(given);
    if (hit && hit.expiresAt > now) return hit.found;
    const found = (await this.merchants.credentialsOf(given)) ?? null;
    if (this.config.merchantCacheMs > 0) {
      if (this.cache.size > 10_000) this.cache.clear();
      this.cache.set(given, { found, expiresAt: now + this.config.merchantCacheMs });
    }
    return found;
  }
}
