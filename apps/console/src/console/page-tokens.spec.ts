import { csrfHolds, mintCsrf, openFlash, pageCookie, pageTokenKey, sealFlash } from './page-tokens';

describe('page tokens', () => {
  const key = pageTokenKey('a console session key of at least 32 characters', 'gateway console page tokens v1');
  const other = pageTokenKey('a console session key of at least 32 characters', 'gateway portal page tokens v1');

  it('a CSRF token passes for its own purpose and binding only', () => {
    const token = mintCsrf(key, 'session', 'session-a');
    expect(csrfHolds(key, 'session', 'session-a', token)).toBe(true);
    expect(mintCsrf(key, 'session', 'session-a')).not.toBe(token);
    expect(csrfHolds(key, 'session', 'session-b', token)).toBe(false);
    expect(csrfHolds(key, 'pre-session', 'session-a', token)).toBe(false);
    expect(csrfHolds(other, 'session', 'session-a', token)).toBe(false);
    expect(csrfHolds(key, 'session', undefined, token)).toBe(false);
    for (const bad of [undefined, '', 'forged', `${token}x`, token.replace(/.$/, (c) => (c === 'A' ? 'B' : 'A')), ['x']])
      expect(csrfHolds(key, 'session', 'session-a', bad)).toBe(false);
  });

  it('a flash opens for its binding and page only, until it expires', () => {
    const now = Date.UTC(2026, 0, 1);
    const sealed = sealFlash(key, 'session-a', '/console/listeners', { kind: 'enabled', count: 4 }, now);
    expect(openFlash(key, 'session-a', '/console/listeners', sealed, now)).toEqual({ kind: 'enabled', count: 4 });
    expect(openFlash(key, 'session-b', '/console/listeners', sealed, now)).toBeUndefined();
    expect(openFlash(key, 'session-a', '/console/overview', sealed, now)).toBeUndefined();
    expect(openFlash(key, 'session-a', '/console/listeners', sealed, now + 60_000)).toBeUndefined();
    expect(openFlash(other, 'session-a', '/console/listeners', sealed, now)).toBeUndefined();
    const [payload, mac] = sealed.split('.');
    const changed = Buffer.from(JSON.stringify(['enabled', 400, '/console/listeners', now / 1000 + 60])).toString('base64url');
    expect(openFlash(key, 'session-a', '/console/listeners', `${changed}.${mac}`, now)).toBeUndefined();
    expect(openFlash(key, 'session-a', '/console/listeners', `${payload}.`, now)).toBeUndefined();
  });

  it('cookies are __Host- with Path=/ when Secure, the bare name with the scope path over plain http', () => {
    expect(pageCookie('gw_csrf', '/console', true)).toEqual({
      name: '__Host-gw_csrf',
      options: { httpOnly: true, sameSite: 'strict', secure: true, path: '/' },
    });
    expect(pageCookie('gw_portal', '/portal', false)).toEqual({
      name: 'gw_portal',
      options: { httpOnly: true, sameSite: 'strict', secure: false, path: '/portal' },
    });
  });
});
