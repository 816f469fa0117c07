import { applyDelta, dueForDisable, foldVerdicts, FRESH_LISTENER, ListenerHealth, listenerOrigin, originNamed } from './listener-health';

const t = (s: number) => new Date(Date.UTC(2026, 10, 25, 12, 0, s));
const DAY = 86_400_000;

describe('listener health (issue 16, item 2)', () => {
  it('names a listener by scheme, host and port, the default port written out', () => {
    expect(listenerOrigin('https://Hooks.Example.com/a?b=1#c')).toBe('https://hooks.example.com:443');
    expect(listenerOrigin('http://hooks.example.com/a')).toBe('http://hooks.example.com:80');
    expect(listenerOrigin('http://127.0.0.1:8080/x?TransactionID=1')).toBe('http://127.0.0.1:8080');
    expect(listenerOrigin('https://[::1]:9443/')).toBe('https://[::1]:9443');
    expect(() => listenerOrigin('ftp://x/')).toThrow(/not an http/);
    expect(() => listenerOrigin('nonsense')).toThrow();
  });

  it('starts failing at the first failure and counts failures until a success', () => {
    const after1 = applyDelta(FRESH_LISTENER, foldVerdicts([{ ok: false, at: t(1) }]));
    expect(after1).toEqual({ state: 'enabled', failingSince: t(1), lastSuccessAt: null, consecutiveFailures: 1 });
    const after3 = applyDelta(
      after1,
      foldVerdicts([
        { ok: false, at: t(3) },
        { ok: false, at: t(2) },
      ]),
    );
    expect(after3).toEqual({ state: 'enabled', failingSince: t(1), lastSuccessAt: null, consecutiveFailures: 3 });
  });

  it('a success resets the failing period; failures after it in the same batch start a new one', () => {
    const failing: ListenerHealth = { state: 'enabled', failingSince: t(1), lastSuccessAt: null, consecutiveFailures: 7 };
    expect(applyDelta(failing, foldVerdicts([{ ok: true, at: t(5) }]))).toEqual({
      state: 'enabled',
      failingSince: null,
      lastSuccessAt: t(5),
      consecutiveFailures: 0,
    });
    // Sorted by when each attempt ended, not by arrival: fail(4), ok(5), fail(6), fail(7).
    const batch = foldVerdicts([
      { ok: false, at: t(7) },
      { ok: true, at: t(5) },
      { ok: false, at: t(4) },
      { ok: false, at: t(6) },
    ]);
    expect(batch).toEqual({ lastSuccessAt: t(5), firstFailureAfterSuccess: t(6), failuresAfterSuccess: 2 });
    expect(applyDelta(failing, batch)).toEqual({ state: 'enabled', failingSince: t(6), lastSuccessAt: t(5), consecutiveFailures: 2 });
  });

  it('keeps the latest success when an older one arrives late', () => {
    const h: ListenerHealth = { state: 'enabled', failingSince: null, lastSuccessAt: t(9), consecutiveFailures: 0 };
    expect(applyDelta(h, foldVerdicts([{ ok: true, at: t(8) }])).lastSuccessAt).toEqual(t(9));
  });

  it('is due for disabling only when enabled and failing for the whole period', () => {
    const failing: ListenerHealth = { state: 'enabled', failingSince: t(0), lastSuccessAt: null, consecutiveFailures: 40 };
    expect(dueForDisable(failing, new Date(t(0).getTime() + 5 * DAY - 1), 5 * DAY)).toBe(false);
    expect(dueForDisable(failing, new Date(t(0).getTime() + 5 * DAY), 5 * DAY)).toBe(true);
    expect(dueForDisable({ ...failing, state: 'disabled' }, new Date(t(0).getTime() + 6 * DAY), 5 * DAY)).toBe(false);
    expect(dueForDisable(FRESH_LISTENER, new Date(t(0).getTime() + 6 * DAY), 5 * DAY)).toBe(false);
    // One success inside the period starts it over.
    const recovered = applyDelta(failing, foldVerdicts([{ ok: true, at: t(30) }]));
    expect(dueForDisable(recovered, new Date(t(0).getTime() + 6 * DAY), 5 * DAY)).toBe(false);
  });

  it('an empty batch changes nothing', () => {
    const h: ListenerHealth = { state: 'disabled', failingSince: t(1), lastSuccessAt: t(0), consecutiveFailures: 3 };
    expect(applyDelta(h, foldVerdicts([]))).toEqual(h);
  });
});

describe('originNamed (the listener a recovery names)', () => {
  const known = ['https://shop.example:443', 'http://shop.example:8080', 'https://hooks.example:443'];

  it('takes an origin or a delivery URL as given, cut to its origin', () => {
    expect(originNamed('https://Other.example/hook?x=1', known)).toEqual({ origin: 'https://other.example:443' });
    expect(originNamed('http://shop.example:8080', known)).toEqual({ origin: 'http://shop.example:8080' });
  });

  it('finds a bare host or host:port among the known listeners', () => {
    expect(originNamed('hooks.example', known)).toEqual({ origin: 'https://hooks.example:443' });
    expect(originNamed('shop.example:8080', known)).toEqual({ origin: 'http://shop.example:8080' });
  });

  it('names the problem when the host matches none or several, or the scheme is not http(s)', () => {
    expect(originNamed('nowhere.example', known)).toEqual({ problem: expect.stringContaining('no listener') });
    expect(originNamed('shop.example', known)).toEqual({ problem: expect.stringContaining('several listeners') });
    expect(originNamed('ftp://shop.example', known)).toEqual({ problem: expect.stringContaining('not an http(s) origin') });
  });
});
