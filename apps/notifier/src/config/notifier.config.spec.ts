import { randomBytes } from 'node:crypto';
import { parseDurationMs } from '@app/platform';
import { loadNotifierConfig } from './notifier.config';

// Every variable the notifier needs, so that only the variable under test decides.
const base = {
  DATABASE_URL: 'postgres://postgres@127.0.0.1:5432/x',
  REDIS_URL: 'redis://127.0.0.1:6379',
  SECRETS_KEKS: `s1:${randomBytes(32).toString('base64')}`,
};

describe('notifier config: WEBHOOK_ALLOW_NETWORKS', () => {
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

describe('notifier config: LISTENER_DISABLE_AFTER', () => {
  it('defaults to 5 days and reads a duration with its unit', () => {
    expect(loadNotifierConfig(base).listenerDisableAfterMs).toBe(5 * 86_400_000);
    expect(loadNotifierConfig({ ...base, LISTENER_DISABLE_AFTER: '36h' }).listenerDisableAfterMs).toBe(36 * 3_600_000);
    expect(loadNotifierConfig({ ...base, LISTENER_DISABLE_AFTER: '2s' }).listenerDisableAfterMs).toBe(2_000);
    expect(parseDurationMs('X', '1500ms', 1_000, 10_000)).toBe(1_500);
  });

  it('refuses a bare number, an unknown unit or a value out of range, naming the variable', () => {
    for (const bad of ['5', '5 days', '5w', '0s', '500ms', '400d', '-1d'])
      expect(() => loadNotifierConfig({ ...base, LISTENER_DISABLE_AFTER: bad })).toThrow(/LISTENER_DISABLE_AFTER must be a duration/);
  });
});

describe('notifier config: WEBHOOK_PER_MERCHANT', () => {
  it('defaults to 16 and reads a whole number', () => {
    expect(loadNotifierConfig(base).perMerchant).toBe(16);
    expect(loadNotifierConfig({ ...base, WEBHOOK_PER_MERCHANT: '4' }).perMerchant).toBe(4);
  });

  it('refuses to start with a value that is not a whole number from 1 to 1000, naming the variable', () => {
    for (const bad of ['0', '-1', '1.5', 'many', '1001'])
      expect(() => loadNotifierConfig({ ...base, WEBHOOK_PER_MERCHANT: bad })).toThrow(
        /WEBHOOK_PER_MERCHANT must be a whole number from 1 to 1000/,
      );
  });
});

describe('notifier config: connect and first-byte timeouts', () => {
  it('default to 5 s and 10 s within the 15 s attempt, and never beyond a shorter attempt limit', () => {
    expect(loadNotifierConfig(base)).toMatchObject({ timeoutMs: 15_000, firstByteTimeoutMs: 10_000, connectTimeoutMs: 5_000 });
    expect(loadNotifierConfig({ ...base, WEBHOOK_TIMEOUT_MS: '3000' })).toMatchObject({
      timeoutMs: 3_000,
      firstByteTimeoutMs: 3_000,
      connectTimeoutMs: 3_000,
    });
    expect(loadNotifierConfig({ ...base, WEBHOOK_CONNECT_TIMEOUT_MS: '2000', WEBHOOK_FIRST_BYTE_TIMEOUT_MS: '4000' })).toMatchObject({
      firstByteTimeoutMs: 4_000,
      connectTimeoutMs: 2_000,
    });
  });

  it('refuses a connect limit beyond the first-byte one, or a first-byte limit beyond the attempt', () => {
    expect(() => loadNotifierConfig({ ...base, WEBHOOK_FIRST_BYTE_TIMEOUT_MS: '20000' })).toThrow(
      /WEBHOOK_FIRST_BYTE_TIMEOUT_MS \(20000\) must not exceed WEBHOOK_TIMEOUT_MS \(15000\)/,
    );
    expect(() => loadNotifierConfig({ ...base, WEBHOOK_CONNECT_TIMEOUT_MS: '12000' })).toThrow(
      /WEBHOOK_CONNECT_TIMEOUT_MS \(12000\) must not exceed WEBHOOK_FIRST_BYTE_TIMEOUT_MS \(10000\)/,
    );
    expect(() => loadNotifierConfig({ ...base, WEBHOOK_CONNECT_TIMEOUT_MS: '50' })).toThrow(
      /WEBHOOK_CONNECT_TIMEOUT_MS must be a whole number/,
    );
  });
});
