import type { FeeRate, MethodKind } from '@app/contracts';
import { readDefaultFeePlan } from '@app/boot';
import { AuthLimitConfig, EdgeLimitsConfig, RateLimitConfig, readAuthLimits, readTrustedProxies } from '@app/http';
import { BaseConfig, EnvReader, readBaseConfig, readKeyVariable } from '@app/platform';
import { Keyring, parseKeyring } from '@app/vault/keyring';

export class ApiConfig implements EdgeLimitsConfig {
  base: BaseConfig;
  host: string;
  port: number;
  transitKeys: Keyring;
  /** How long a request waits for a worker's reply before answering 503. */
  replyTimeoutMs: number;
  /** How long a sale waits for its outcome before answering 202 with status 0. */
  saleSyncWaitMs: number;
  /** Days after a declined rebill cycle's date on which it is tried again; recorded with each new rebill. */
  rebillRetryDays: number[];
  /** Merchant credential lookups are cached this long; a rotated key stops working within it. */
  merchantCacheMs: number;
  /** Lookups of merchant ids that do not exist are remembered this long, apart from the real ones (issue 32). */
  merchantNegativeCacheMs: number;
  dbPoolSize: number;
  /** The fee plan of merchants without their own row. */
  defaultFees: Record<MethodKind, FeeRate>;
  /** docs/merchants/split.md 3: most entries a split may have. */
  splitMaxEntries: number;
  rateLimits: RateLimitConfig;
  authLimits: AuthLimitConfig;
  /**
   * TRUSTED_PROXIES: the addresses (or CIDR ranges) of the proxies whose X-Forwarded-For names the
   * client (Fastify's trustProxy); empty: the client is the socket's address, X-Forwarded-For ignored.
   */
  trustedProxies: string[];
}

export function loadApiConfig(env: NodeJS.ProcessEnv = process.env): ApiConfig {
  const r = new EnvReader(env);
  const base = readBaseConfig(r);
  const transitSpec = readKeyVariable(r, base, 'TRANSIT_KEYS');
  const cfg: ApiConfig = {
    base,
    host: r.str('HOST', '127.0.0.1'),
    port: r.int('PORT', 3000, 0, 65535),
    transitKeys: (transitSpec && r.parse('TRANSIT_KEYS', () => parseKeyring(transitSpec, 'TRANSIT_KEYS'))) as Keyring,
    // A capture or cancel keeps part of it for its reply's trip back (ReceiverService), so not too short.
    replyTimeoutMs: r.int('REPLY_TIMEOUT_MS', 10_000, 1_000, 120_000),
    merchantCacheMs: r.int('MERCHANT_CACHE_MS', 5_000, 0, 600_000),
    merchantNegativeCacheMs: r.int('MERCHANT_NEGATIVE_CACHE_MS', 1_000, 0, 60_000),
    saleSyncWaitMs: r.int('SALE_SYNC_WAIT_MS', 10_000, 0, 120_000),
    rebillRetryDays: retryDays(r.str('REBILL_RETRY_DAYS', '1,3,5'), (m) => r.problem(m)),
    dbPoolSize: r.int('DB_POOL_SIZE', 10, 1, 200),
    defaultFees: readDefaultFeePlan(r),
    splitMaxEntries: r.int('SPLIT_MAX_ENTRIES', 10, 1, 100),
    rateLimits: {
      enabled: r.bool('RATE_LIMIT_ENABLED', true),
      // Well above what one merchant drives on the bench (about 1 000 sales/s, 1 200 token/add/s
      // on a good day): the defaults stop a runaway client, not a busy shop.
      writesPerS: r.int('RATE_LIMIT_WRITES_PER_S', 2_000, 1, 1_000_000),
      readsPerS: r.int('RATE_LIMIT_READS_PER_S', 2_000, 1, 1_000_000),
      burstS: r.int('RATE_LIMIT_BURST_S', 2, 0, 3_600),
      burstWindowS: r.int('RATE_LIMIT_BURST_WINDOW_S', 10, 1, 3_600),
    },
    authLimits: readAuthLimits(r),
    trustedProxies: readTrustedProxies(r),
  };
  r.done('api');
  return cfg;
}

/** "1,3,5": ascending whole days from 1 to 365, at most 10 of them ("" for no retries). */
export function retryDays(text: string, problem: (m: string) => void): number[] {
  const days = text.trim() === '' ? [] : text.split(',').map((d) => Number(d.trim()));
  const ok = days.length <= 10 && days.every((d, i) => Number.isInteger(d) && d >= 1 && d <= 365 && (i === 0 || d > days[i - 1]));
  if (!ok) problem(`REBILL_RETRY_DAYS must be ascending whole days from 1 to 365, at most 10, such as "1,3,5" (got "${text}")`);
  return ok ? days : [];
}
