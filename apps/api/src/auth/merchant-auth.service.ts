import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { createHash, timingSafeEqual } from 'node:crypto';
import { DataSource } from 'typeorm';
import { DomainError, ErrorCodes } from '@app/contracts';
import { ApiConfig } from '../config/api.config';

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

interface CachedMerchant {
  keyHash: Buffer | null; // null: no such merchant (cached too, so a flood of bad ids stays cheap)
  expiresAt: number;
}

/**
 * Authenticates `verification` on every /v1 request. Unknown merchant and wrong key answer the
 * same 401 so a caller can't probe which merchant ids exist.
 */
@Injectable()
export class MerchantAuthService {
  private readonly cache = new Map<string, CachedMerchant>();

  constructor(
    @InjectDataSource() private readonly db: DataSource,
    private readonly config: ApiConfig,
  ) {}

  async authenticate(merchantId: string, merchantKey: string): Promise<string> {
    const id = merchantId.toLowerCase();
    const keyHash = UUID.test(id) ? await this.keyHashOf(id) : null;
    const given = createHash('sha256').update(merchantKey).digest();
    // Compare even when the merchant is unknown, so both failures take the same time.
    const ok = timingSafeEqual(given, keyHash ?? Buffer.alloc(32)) && keyHash !== null;
    if (!ok) {
      throw new DomainError('auth', ErrorCodes.AuthenticationFailed, 'Authentication failed: check verification.merchantId and verification.merchantKey.', 'verification');
    }
    return id;
  }

  private async keyHashOf(id: string): Promise<Buffer | null> {
    const now = Date.now();
    const hit = this.cache.get(id);
    if (hit && hit.expiresAt > now) return hit.keyHash;
    const rows: { key_hash: Buffer }[] = await this.db.query('SELECT key_hash FROM merchants WHERE id = $1', [id]);
    const keyHash = rows[0]?.key_hash ?? null;
    if (this.config.merchantCacheMs > 0) {
      if (this.cache.size > 10_000) this.cache.clear();
      this.cache.set(id, { keyHash, expiresAt: now + this.config.merchantCacheMs });
    }
    return keyHash;
  }
}
