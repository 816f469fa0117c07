import { randomBytes } from 'node:crypto';
import { loadNotifierConfig } from './notifier.config';

describe('notifier config: WEBHOOK_ALLOW_NETWORKS', () => {
  // Every variable the notifier needs, so that only the allowlist decides.
  const base = {
    DATABASE_URL: 'postgres://postgres@127.0.0.1:5432/x',
    REDIS_URL: 'redis://127.0.0.1:6379',
    SECRETS_KEKS: `s1:${randomBytes(32).toString('base64')}`,
  };

  it('accepts loopback outside production (tests, local development)', () => {
    for (const NODE_ENV of ['development', 'test']) {
      expect(
        loadNotifierConfig({ ...base, NODE_ENV, WEBHOOK_ALLOW_NETWORKS: '127.0.0.0/8,::1/128' }).allowNetworks.check('127.0.0.1', 'ipv4'),
      ).toBe(true);
    }
  });

  it('refuses to start in production with an entry that opens loopback, naming it', () => {
    expect(() => loadNotifierConfig({ ...base, NODE_ENV: 'production', WEBHOOK_ALLOW_NETWORKS: '10.0.0.0/8,127.0.0.1/32' })).toThrow(
      /WEBHOOK_ALLOW_NETWORKS may not open loopback in production \(127\.0\.0\.1\/32\)/,
    );
    expect(() => loadNotifierConfig({ ...base, NODE_ENV: 'production', WEBHOOK_ALLOW_NETWORKS: '10.0.0.0/8' })).not.toThrow(/loopback/);
  });
});
