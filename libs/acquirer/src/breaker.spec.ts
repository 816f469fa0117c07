import { AcquirerConnector, AcquirerResult, AcquirerUnavailableError } from './acquirer.connector';
import { BreakerConnector } from './breaker';

const declined: AcquirerResult = { outcome: 'declined', returnCode: '05', returnMessage: 'Not authorized', tid: 't', nsu: '' };

function fake(behaviour: () => Promise<AcquirerResult>) {
  const calls = { n: 0 };
  const c = {
    name: 'cielo',
    authorize: () => {
      calls.n++;
      return behaviour();
    },
  } as unknown as AcquirerConnector;
  return { c, calls };
}

const cmd = {} as Parameters<AcquirerConnector['authorize']>[0];
const settings = { errorPercent: 50, minCalls: 3, resetMs: 60_000, windowMs: 10_000 };

describe('BreakerConnector', () => {
  it('opens after outages and then refuses at once, without calling the acquirer', async () => {
    const { c, calls } = fake(() => Promise.reject(new AcquirerUnavailableError('cielo', 'cielo: not reached (ECONNREFUSED)')));
    const states: string[] = [];
    const b = new BreakerConnector(c, settings, (s) => states.push(s));
    for (let i = 0; i < 3; i++) await expect(b.authorize(cmd)).rejects.toBeInstanceOf(AcquirerUnavailableError);
    expect(states).toEqual(['open']);
    const before = calls.n;
    await expect(b.authorize(cmd)).rejects.toThrow(/circuit breaker open/);
    expect(calls.n).toBe(before);
  });

  it('never opens on declines: they are answers', async () => {
    const { c, calls } = fake(() => Promise.resolve(declined));
    const b = new BreakerConnector(c, settings);
    for (let i = 0; i < 10; i++) expect(await b.authorize(cmd)).toEqual(declined);
    expect(b.opened).toBe(false);
    expect(calls.n).toBe(10);
  });
});
