import { spawnSync } from 'node:child_process';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

/** Each app validates its own environment at boot and names every bad variable. */
describe('configuration at boot', () => {
  // An empty data folder: no development keys to fall back on.
  const dataDir = mkdtempSync(join(tmpdir(), 'gw-boot-'));
  const boot = (app: string, env: Record<string, string>) => {
    const run = spawnSync(process.execPath, [`dist/apps/${app}/src/main.js`], {
      env: { ...process.env, TRANSIT_KEYS: '', VAULT_KEKS: '', FINGERPRINT_KEYS: '', DATA_DIR: dataDir, ...env },
      encoding: 'utf8',
      timeout: 30_000,
    });
    return { status: run.status, stderr: run.stderr };
  };

  it('a production tokenizer refuses to start without its keys, naming each', () => {
    const { status, stderr } = boot('tokenizer', { NODE_ENV: 'production' });
    expect(status).toBe(1);
    for (const name of ['TRANSIT_KEYS', 'VAULT_KEKS', 'FINGERPRINT_KEYS']) expect(stderr).toContain(`${name} is required in production`);
  });

  it('a production notifier refuses to start without SECRETS_KEKS, and needs none of the vault keys', () => {
    const { status, stderr } = boot('notifier', { NODE_ENV: 'production', SECRETS_KEKS: '' });
    expect(status).toBe(1);
    expect(stderr).toContain('SECRETS_KEKS is required in production');
    for (const name of ['TRANSIT_KEYS', 'VAULT_KEKS', 'FINGERPRINT_KEYS']) expect(stderr).not.toContain(name);
  });

  it('a production console refuses to start without its session and portal keys, and needs none of the vault keys', () => {
    const { status, stderr } = boot('console', { NODE_ENV: 'production', CONSOLE_SESSION_KEY: '', PORTAL_LINK_KEY: '' });
    expect(status).toBe(1);
    for (const name of ['CONSOLE_SESSION_KEY', 'PORTAL_LINK_KEY']) expect(stderr).toContain(`${name} is required in production`);
    for (const name of ['TRANSIT_KEYS', 'VAULT_KEKS', 'FINGERPRINT_KEYS']) expect(stderr).not.toContain(name);
  });

  it('a production api needs neither the console session key nor the portal link key', () => {
    const { status, stderr } = boot('api', { NODE_ENV: 'production', CONSOLE_SESSION_KEY: '', PORTAL_LINK_KEY: '' });
    expect(status).toBe(1);
    expect(stderr).toContain('TRANSIT_KEYS is required in production');
    for (const name of ['CONSOLE_SESSION_KEY', 'PORTAL_LINK_KEY']) expect(stderr).not.toContain(name);
  });

  it('only development falls back to the quick start key file', () => {
    const { status, stderr } = boot('tokenizer', { NODE_ENV: 'test' });
    expect(status).toBe(1);
    expect(stderr).toContain('VAULT_KEKS is required in test');
  });

  it('a development api without keys says how to get them', () => {
    const { status, stderr } = boot('api', { NODE_ENV: 'development' });
    expect(status).toBe(1);
    expect(stderr).toMatch(/TRANSIT_KEYS is required \(in development, run "npm start" once/);
  });

  it('names malformed variables without echoing key material', () => {
    const secretish = 'k1:c2VjcmV0LWJ1dC10b28tc2hvcnQ=';
    const { status, stderr } = boot('api', {
      PORT: 'eighty',
      REDIS_URL: 'http://x',
      TRANSIT_KEYS: secretish,
      WORKER_CONCURRENCY: 'token.add=lots',
      NODE_ENV: 'production',
    });
    expect(status).toBe(1);
    expect(stderr).toContain('PORT must be a whole number');
    expect(stderr).toContain('REDIS_URL must be a redis: or rediss: URL');
    expect(stderr).toContain('TRANSIT_KEYS');
    expect(stderr).toContain('WORKER_CONCURRENCY entries must look like token.add=32 (got "token.add=lots")');
    expect(stderr).not.toContain('c2VjcmV0LWJ1dC10b28tc2hvcnQ');
  });
});
