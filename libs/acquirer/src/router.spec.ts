import { AcquirerConnector } from './acquirer.connector';
import { AcquirerRouter, NoRouteError, RoutingSource } from './router';

const named = (name: string) => ({ name }) as unknown as AcquirerConnector;

describe('AcquirerRouter', () => {
  const connectors = { sandbox: named('sandbox'), cielo: named('cielo'), erede: named('erede') };

  function source(state: { environment: 'test' | 'production'; accounts: Record<number, string> }) {
    const calls = { routing: 0, account: 0 };
    const s: RoutingSource = {
      routingOf: () => {
        calls.routing++;
        return Promise.resolve({ environment: state.environment, acquirers: Object.keys(state.accounts).map(Number) });
      },
      accountOf: (_m, code) => {
        calls.account++;
        const secret = state.accounts[code];
        return Promise.resolve(secret === undefined ? undefined : { account: `acct-${code}`, secret });
      },
    };
    return { s, calls };
  }

  it('routes a production sale to its connector with the opened account, and reuses it within the cache time', async () => {
    const { s, calls } = source({ environment: 'production', accounts: { 26: 'key' } });
    const router = new AcquirerRouter(connectors, s, 60_000);
    const route = await router.route('m', 26);
    expect(route.connector.name).toBe('cielo');
    expect(route.account).toEqual({ account: 'acct-26', secret: 'key' });
    expect(await router.route('m', 26)).toBe(route);
    expect(calls).toEqual({ routing: 1, account: 1 });
  });

  it('never caches a refusal: an account set a moment later serves the next sale', async () => {
    const state = { environment: 'production' as const, accounts: {} as Record<number, string> };
    const { s } = source(state);
    const router = new AcquirerRouter(connectors, s, 60_000);
    await expect(router.route('m', 27)).rejects.toBeInstanceOf(NoRouteError);
    state.accounts[27] = 'token';
    expect((await router.route('m', 27)).connector.name).toBe('erede');
  });

  it("sends a test merchant's sales to the sandbox without opening any account", async () => {
    const { s, calls } = source({ environment: 'test', accounts: { 26: 'key' } });
    const route = await new AcquirerRouter(connectors, s, 0).route('m', 26);
    expect(route).toEqual({ connector: connectors.sandbox });
    expect(calls.account).toBe(0);
  });
});
