import { register } from 'prom-client';
import { AcquirerConnector, AcquirerResult, AcquirerUnavailableError, AcquirerUnreachableError } from './acquirer.connector';
import { acquirerCircuitOpen, acquirerDuration, acquirerResponses, codeLabel } from './acquirer-metrics';
import { BreakerConnector } from './breaker';
import { MeteredConnector } from './metered';

const declined: AcquirerResult = { outcome: 'declined', returnCode: '05', returnMessage: 'Not authorized', tid: 't', nsu: '' };
const approved: AcquirerResult = { ...declined, outcome: 'approved', returnCode: '00', returnMessage: 'Approved' };

/** A connector whose every operation does what `behaviour` says. */
function fake(name: string, behaviour: () => Promise<AcquirerResult | undefined>): AcquirerConnector {
  const op = () => behaviour();
  return { name, authorize: op, capture: op, cancel: op, reverse: op, inquire: op, settle: op } as unknown as AcquirerConnector;
}

const cmd = {} as Parameters<AcquirerConnector['authorize']>[0];
const ref = {} as Parameters<AcquirerConnector['inquire']>[0];

async function counted(labels: Record<string, string>): Promise<number> {
  const { values } = await acquirerResponses.get();
  const matches = (v: (typeof values)[number]) => Object.entries(labels).every(([k, x]) => (v.labels as Record<string, unknown>)[k] === x);
  return values.filter(matches).reduce((n, v) => n + v.value, 0);
}

describe('MeteredConnector', () => {
  beforeEach(() => {
    acquirerResponses.reset();
    acquirerDuration.reset();
    acquirerCircuitOpen.reset();
  });

  it('counts and times each call by acquirer, operation, outcome and return code', async () => {
    const m = new MeteredConnector(fake('sandbox', () => Promise.resolve(approved)));
    await m.authorize(cmd);
    await m.capture(cmd as never);
    expect(await counted({ acquirer: 'sandbox', operation: 'authorize', outcome: 'approved', code: '00' })).toBe(1);
    expect(await counted({ acquirer: 'sandbox', operation: 'capture', outcome: 'approved', code: '00' })).toBe(1);
    const text = await register.getSingleMetricAsString('acquirer_request_duration_seconds');
    expect(text).toMatch(/acquirer_request_duration_seconds_count\{acquirer="sandbox",operation="authorize",outcome="approved"\} 1/);
  });

  it('names a failure by what it means, rethrowing it as it was', async () => {
    const unavailable = new AcquirerUnavailableError('cielo', 'cielo: not reached (ECONNREFUSED)');
    await expect(new MeteredConnector(fake('cielo', () => Promise.reject(unavailable))).authorize(cmd)).rejects.toBe(unavailable);
    const lost = new AcquirerUnreachableError('cielo', 'cielo: the sale got no answer');
    await expect(new MeteredConnector(fake('cielo', () => Promise.reject(lost))).authorize(cmd)).rejects.toBe(lost);
    await expect(new MeteredConnector(fake('erede', () => Promise.reject(new TypeError('bug')))).settle(ref)).rejects.toThrow('bug');
    expect(await counted({ acquirer: 'cielo', outcome: 'unavailable', code: 'none' })).toBe(1);
    expect(await counted({ acquirer: 'cielo', outcome: 'timeout', code: 'none' })).toBe(1);
    expect(await counted({ acquirer: 'erede', operation: 'settle', outcome: 'error', code: 'none' })).toBe(1);
  });

  it('counts an inquiry the acquirer has no record of as not_found', async () => {
    expect(await new MeteredConnector(fake('cielo', () => Promise.resolve(undefined))).inquire(ref)).toBeUndefined();
    expect(await counted({ operation: 'inquire', outcome: 'not_found' })).toBe(1);
  });

  it('keeps a return code a short code: anything else is "other", so an odd answer adds no series', () => {
    expect(codeLabel('05')).toBe('05');
    expect(codeLabel('BP171')).toBe('BP171');
    expect(codeLabel('')).toBe('none');
    expect(codeLabel('4111 1111 1111 1111')).toBe('other');
    expect(codeLabel('a'.repeat(9))).toBe('other');
  });

  it('passes the sandbox-only touchedSince through, and offers none for a connector without it', () => {
    const sandbox = { ...fake('sandbox', () => Promise.resolve(approved)), touchedSince: () => Promise.resolve(['t']) };
    expect(new MeteredConnector(sandbox).touchedSince).toBeDefined();
    expect(new MeteredConnector(fake('cielo', () => Promise.resolve(approved))).touchedSince).toBeUndefined();
  });
});

describe('acquirer_circuit_open', () => {
  const open = async (acquirer: string) => (await acquirerCircuitOpen.get()).values.find((v) => v.labels.acquirer === acquirer)?.value;

  it('is 0 from the start, 1 while the breaker is open or half-open, and 0 again once a trial call succeeds', async () => {
    let fail = true;
    const inner = fake('erede', () =>
      fail ? Promise.reject(new AcquirerUnavailableError('erede', 'erede: not reached (ECONNREFUSED)')) : Promise.resolve(declined),
    );
    const b = new BreakerConnector(inner, { errorPercent: 50, minCalls: 2, resetMs: 100, windowMs: 10_000 });
    const m = new MeteredConnector(b);
    expect(await open('erede')).toBe(0);
    for (let i = 0; i < 2; i++) await expect(m.authorize(cmd)).rejects.toBeInstanceOf(AcquirerUnavailableError);
    expect(await open('erede')).toBe(1);
    // Refused by the breaker without a call: still counted, as unavailable.
    await expect(m.authorize(cmd)).rejects.toThrow(/circuit breaker open/);
    expect(await counted({ acquirer: 'erede', outcome: 'unavailable' })).toBe(3);
    await new Promise((r) => setTimeout(r, 150));
    expect(await open('erede')).toBe(1); // half-open: one trial call goes through
    fail = false;
    await m.authorize(cmd);
    expect(await open('erede')).toBe(0);
  });
});
