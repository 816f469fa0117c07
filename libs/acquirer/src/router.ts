import { ConnectorName, connectorFor } from '@app/contracts';
import { AcquirerAccount, AcquirerConnector } from './acquirer.connector';

/** A sale's connector and, for a real acquirer, the merchant's account there. */
export interface Route {
  connector: AcquirerConnector;
  account?: AcquirerAccount;
}

/** Where the router reads a merchant's routing and opened accounts from (the tokenizer: Postgres + SECRETS_KEKS). */
export interface RoutingSource {
  routingOf(merchantId: string): Promise<{ environment: 'test' | 'production'; acquirers: number[] } | undefined>;
  accountOf(merchantId: string, acquirer: number): Promise<AcquirerAccount | undefined>;
}

/** The sale cannot go to an acquirer: no connector for its code, or no account (recorded as not charged, 030). */
export class NoRouteError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'NoRouteError';
  }
}

interface Cached<T> {
  value: T;
  until: number;
}

/**
 * Picks the connector of a sale from its merchant's environment and the code it names (see
 * connectorFor), with the merchant's account opened. A route is cached for `cacheMs`, so a changed
 * account applies within that time (a refusal is never cached); the secrets live only in this
 * process's memory.
 */
export class AcquirerRouter {
  private readonly routes = new Map<string, Cached<Route | string>>();

  constructor(
    private readonly connectors: Readonly<Record<ConnectorName, AcquirerConnector>>,
    private readonly source: RoutingSource,
    private readonly cacheMs: number,
  ) {}

  /** The connector by name (the sandbox for everything recorded before connectors existed). */
  connector(name: ConnectorName): AcquirerConnector {
    return this.connectors[name];
  }

  /** Throws NoRouteError when the merchant cannot use `code`. */
  async route(merchantId: string, code: number): Promise<Route> {
    const key = `${merchantId}:${code}`;
    const now = Date.now();
    let hit = this.routes.get(key);
    if (!hit || hit.until <= now) {
      hit = { value: await this.resolve(merchantId, code), until: now + this.cacheMs };
      if (this.routes.size > 10_000) this.routes.clear();
      // Only a route is kept: an account set a moment ago must serve the next sale the api let through.
      if (typeof hit.value !== 'string') this.routes.set(key, hit);
    }
    if (typeof hit.value === 'string') throw new NoRouteError(hit.value);
    return hit.value;
  }

  private async resolve(merchantId: string, code: number): Promise<Route | string> {
    const routing = await this.source.routingOf(merchantId);
    if (!routing) return 'unknown merchant';
    const choice = connectorFor(routing.environment, code, routing.acquirers);
    if ('refused' in choice) return choice.refused;
    if (choice.connector === 'sandbox') return { connector: this.connectors.sandbox };
    const account = await this.source.accountOf(merchantId, code);
    if (!account) return `payment.acquirer ${code}: this merchant has no account set at that acquirer.`;
    return { connector: this.connectors[choice.connector], account };
  }
}
