import type { MerchantEnvironment } from '@app/contracts';
import type { SealedWebhookSecrets } from './webhook-secret-seal';

// A merchant's rows as MerchantsRepository reads and writes them.

export interface NewMerchant {
  name: string;
  keyHash: Buffer;
  webhookSecret: string;
  /** Default `test`: every sale to the built-in sandbox. */
  environment?: MerchantEnvironment;
}

export interface CreatedMerchant {
  /** Internal (UUID). */
  id: string;
  publicId: string;
}

export interface MerchantCredentialsRow {
  /** Internal (UUID). */
  id: string;
  keyHash: Buffer;
  /** The merchant's own rate limits; null: the api's defaults. */
  limits: MerchantRateLimits;
}

/** Requests per second a merchant may send (merchant:set-limits); null: the api's default. */
export interface MerchantRateLimits {
  writesPerS: number | null;
  readsPerS: number | null;
}

/** The range of a per-merchant limit, as the migration's CHECK constraints hold it. */
export const RATE_LIMIT_RANGE = { min: 1, max: 1_000_000 } as const;

export interface RateLimitColumns {
  rate_limit_writes_per_s: number | null;
  rate_limit_reads_per_s: number | null;
}

export const limitsOf = (r: RateLimitColumns): MerchantRateLimits => ({
  writesPerS: r.rate_limit_writes_per_s,
  readsPerS: r.rate_limit_reads_per_s,
});

/** The sealed webhook secret columns, and a row of them as node-postgres returns it. */
export const SEALED_SECRET_COLUMNS = 'webhook_secrets_kek_id, webhook_secret_sealed, previous_webhook_secret_sealed';
export interface SealedSecretColumns {
  webhook_secrets_kek_id: string;
  webhook_secret_sealed: Buffer;
  previous_webhook_secret_sealed: Buffer | null;
}
export const sealedOf = (r: SealedSecretColumns): SealedWebhookSecrets => ({
  kid: r.webhook_secrets_kek_id,
  current: r.webhook_secret_sealed,
  previous: r.previous_webhook_secret_sealed,
});
