import { Injectable } from '@nestjs/common';
import { connectorFor, DomainError, ErrorCodes } from '@app/contracts';
import { AcquirerAccountsRepository, MerchantRouting } from '@app/persistence';
import { ApiConfig } from '../config/api.config';

/**
 * Refuses, before anything is recorded, a sale no connector can serve: a production merchant's
 * sale names an acquirer the gateway does not connect to, or one the merchant has no account at
 * (030, naming payment.acquirer). A test merchant's sales all go to the sandbox. The merchant's
 * environment and acquirer codes are cached for MERCHANT_CACHE_MS, as its credentials are.
 */
@Injectable()
export class AcquirerRoutingService {
  private readonly cache = new Map<string, { routing: MerchantRouting | undefined; until: number }>();

  constructor(
    private readonly accounts: AcquirerAccountsRepository,
    private readonly config: ApiConfig,
  ) {}

  async check(merchantId: string, code: number): Promise<void> {
    const routing = await this.routingOf(merchantId);
    const choice = connectorFor(routing?.environment ?? 'test', code, routing?.acquirers ?? []);
    if ('refused' in choice) throw new DomainError('validation', ErrorCodes.AcquirerNotAvailable, choice.refused, 'payment.acquirer');
  }

  private async routingOf(merchantId: string): Promise<MerchantRouting | undefined> {
    const now = Date.now();
    const hit = this.cache.get(merchantId);
    if (hit && hit.until > now) return hit.routing;
    const routing = await this.accounts.routingOf(merchantId);
    if (this.cache.size > 10_000) this.cache.clear();
    this.cache.set(merchantId, { routing, until: now + this.config.merchantCacheMs });
    return routing;
  }
}
