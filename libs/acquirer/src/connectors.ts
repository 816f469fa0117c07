import type { EnvReader } from '@app/platform';
import type { Keyring } from '@app/vault/keyring';
import { AcquirerAccountsRepository, openAcquirerSecret } from '@app/persistence';
import { AcquirerConnector } from './acquirer.connector';
import { BreakerConnector, BreakerSettings } from './breaker';
import { CieloConnector } from './cielo/cielo.connector';
import { EredeConnector } from './erede/erede.connector';
import { MeteredConnector } from './metered';
import { AcquirerRouter, RoutingSource } from './router';

/** Where the real acquirers are, and how long the gateway waits for them (docs/acquirers.md). */
export interface ConnectorSettings {
  cieloApiUrl: string;
  cieloQueryUrl: string;
  eredeApiUrl: string;
  connectTimeoutMs: number;
  responseTimeoutMs: number;
  /** Cielo asks for this long between two cancellations of one sale. */
  cieloVoidSpacingMs: number;
  breaker: BreakerSettings;
  /** A merchant's routing and opened account are reused this long (a changed account applies within it). */
  accountCacheMs: number;
}

/** The production hosts, as the acquirers publish them; `npm start` points these at its simulators. */
export const ACQUIRER_DEFAULT_URLS = {
  CIELO_API_URL: 'https://api.cieloecommerce.cielo.com.br/',
  CIELO_QUERY_URL: 'https://apiquery.cieloecommerce.cielo.com.br/',
  EREDE_API_URL: 'https://api.userede.com.br/erede',
} as const;

/** `responseTimeoutMs` is the tokenizer's ACQUIRER_TIMEOUT_MS: one limit for every acquirer call. */
export function readConnectorSettings(r: EnvReader, responseTimeoutMs: number): ConnectorSettings {
  const url = (name: keyof typeof ACQUIRER_DEFAULT_URLS) => r.url(name, ACQUIRER_DEFAULT_URLS[name], ['https:', 'http:']);
  return {
    cieloApiUrl: url('CIELO_API_URL'),
    cieloQueryUrl: url('CIELO_QUERY_URL'),
    eredeApiUrl: url('EREDE_API_URL'),
    // A TCP and TLS handshake to a healthy acquirer takes tens of milliseconds; two seconds means it is not answering.
    connectTimeoutMs: r.int('ACQUIRER_CONNECT_TIMEOUT_MS', 2_000, 100, 30_000),
    responseTimeoutMs,
    cieloVoidSpacingMs: r.int('CIELO_VOID_SPACING_MS', 5_000, 0, 60_000),
    breaker: {
      errorPercent: r.int('ACQUIRER_BREAKER_ERROR_PERCENT', 50, 1, 100),
      minCalls: r.int('ACQUIRER_BREAKER_MIN_CALLS', 10, 1, 10_000),
      resetMs: r.int('ACQUIRER_BREAKER_RESET_MS', 15_000, 100, 600_000),
      windowMs: r.int('ACQUIRER_BREAKER_WINDOW_MS', 10_000, 1_000, 600_000),
    },
    accountCacheMs: r.int('ACQUIRER_ACCOUNT_CACHE_MS', 30_000, 0, 3_600_000),
  };
}

/** Routing from Postgres: the merchant's environment and codes, its account opened with SECRETS_KEKS. */
export function accountsSource(accounts: AcquirerAccountsRepository, secrets: Keyring): RoutingSource {
  return {
    routingOf: (merchantId) => accounts.routingOf(merchantId),
    accountOf: async (merchantId, acquirer) => {
      const sealed = await accounts.sealedOf(merchantId, acquirer);
      return sealed && { account: sealed.account, secret: openAcquirerSecret(secrets, merchantId, sealed) };
    },
  };
}

/**
 * The three connectors (the real ones each behind its breaker, every one timed and counted on
 * /metrics) and the router that picks one per sale. `onBreaker` hears each breaker's state
 * changes (the tokenizer logs them; acquirer_circuit_open shows them).
 */
export function createAcquirerRouter(
  sandbox: AcquirerConnector,
  settings: ConnectorSettings,
  source: RoutingSource,
  onBreaker?: (acquirer: string, state: 'open' | 'half-open' | 'closed') => void,
): AcquirerRouter {
  // Every call is measured outside the breaker: a call it refuses counts as unavailable (acquirer_* metrics).
  const guarded = (c: AcquirerConnector) =>
    new MeteredConnector(new BreakerConnector(c, settings.breaker, (state) => onBreaker?.(c.name, state)));
  const http = { connectTimeoutMs: settings.connectTimeoutMs, responseTimeoutMs: settings.responseTimeoutMs };
  return new AcquirerRouter(
    {
      sandbox: new MeteredConnector(sandbox),
      cielo: guarded(
        new CieloConnector({
          apiUrl: settings.cieloApiUrl,
          queryUrl: settings.cieloQueryUrl,
          voidSpacingMs: settings.cieloVoidSpacingMs,
          ...http,
        }),
      ),
      erede: guarded(new EredeConnector({ apiUrl: settings.eredeApiUrl, ...http })),
    },
    source,
    settings.accountCacheMs,
  );
}
