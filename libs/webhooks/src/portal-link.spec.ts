import { openPortal, parsePortalTtl, portalKeys, sealPortal } from './portal-link';

const keys = portalKeys('k'.repeat(44));
const claims = {
  linkId: '0b7f3c1e-3c0f-4a55-9b1e-3f2b8d9c1a01',
  merchantId: '3138245968',
  expiresAt: new Date(Date.UTC(2030, 0, 1)),
};
const now = Date.UTC(2029, 0, 1);

describe('portal link tokens', () => {
  it('opens what it sealed, with the same claims', () => {
    expect(openPortal(keys, 'link', sealPortal(keys, 'link', claims), now)).toEqual(claims);
  });

  it('refuses a changed byte, swapped claims, another key or the other purpose', () => {
    const token = sealPortal(keys, 'link', claims);
    const flipped = token.slice(0, 5) + (token[5] === 'A' ? 'B' : 'A') + token.slice(6);
    expect(openPortal(keys, 'link', flipped, now)).toBe('invalid');
    const other = sealPortal(keys, 'link', { ...claims, merchantId: '3138245969' });
    const swapped = `${other.split('.')[0]}.${token.split('.')[1]}`;
    expect(openPortal(keys, 'link', swapped, now)).toBe('invalid');
    expect(openPortal(portalKeys('x'.repeat(44)), 'link', token, now)).toBe('invalid');
    expect(openPortal(keys, 'session', token, now)).toBe('invalid');
    expect(openPortal(keys, 'link', '', now)).toBe('invalid');
  });

  it('says expired once the expiry has passed', () => {
    expect(openPortal(keys, 'link', sealPortal(keys, 'link', claims), claims.expiresAt.getTime())).toBe('expired');
  });

  it('reads --ttl in s, m, h and d, up to 7 days', () => {
    expect(parsePortalTtl('3s')).toBe(3);
    expect(parsePortalTtl('30m')).toBe(1800);
    expect(parsePortalTtl('1h')).toBe(3600);
    expect(parsePortalTtl('7d')).toBe(604_800);
    expect(parsePortalTtl('8d')).toMatch(/--ttl.*outside/);
    expect(parsePortalTtl('0s')).toMatch(/--ttl/);
    expect(parsePortalTtl('1 hour')).toMatch(/--ttl.*not a duration/);
  });
});
