import type { FeeRate, MethodKind } from '@app/contracts';
import { BaseConfig, EnvReader, readBaseConfig, readDefaultFeePlan, readKeyVariable } from '@app/platform';
import { Keyring, parseKeyring } from '@app/vault';

export class ApiConfig {
  base: BaseConfig;
  host: string;
  port: number;
  transitKeys: Keyring;
  /** How long a request waits for a worker's reply before answering 503. */
  replyTimeoutMs: number;
  /** How long a sale waits for its outcome before answering 202 with status 0. */
  saleSyncWaitMs: number;
  /** Merchant credential lookups are cached this long; a rotated key stops working within it. */
  merchantCacheMs: number;
  dbPoolSize: number;
  /** The fee plan of merchants without their own row. */
  defaultFees: Record<MethodKind, FeeRate>;
  /** SPLIT.md 3: most entries a split may have. */
  splitMaxEntries: number;
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
    saleSyncWaitMs: r.int('SALE_SYNC_WAIT_MS', 10_000, 0, 120_000),
    dbPoolSize: r.int('DB_POOL_SIZE', 10, 1, 200),
    defaultFees: readDefaultFeePlan(r),
    splitMaxEntries: r.int('SPLIT_MAX_ENTRIES', 10, 1, 100),
  };
  r.done('api');
  return cfg;
}
