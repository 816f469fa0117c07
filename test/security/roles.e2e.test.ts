import { Client } from 'pg';
import { spawnSync } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { applyRoleGrants } from '@app/persistence';
import { migrateEntry, repoRoot, runNode } from '../../scripts/lib/processes';
import { roleUrl, withDatabase, withUser } from '../../scripts/lib/database';
import { receiverOf } from '../support/money';
import { AppHandle, createMerchant, startApp, startPrivatePostgres } from '../support/stack';

jest.setTimeout(120_000);

/**
 * The apps as their database roles see them: who they may run as, and what a statement outside
 * their grants looks like (the grants themselves: test/persistence/roles.test.ts).
 */
describe('apps under their database roles', () => {
  let owner: Client;
  const started: AppHandle[] = [];

  beforeAll(async () => {
    owner = new Client({ connectionString: process.env.DATABASE_URL });
    await owner.connect();
  });

  afterAll(async () => {
    await Promise.all(started.map((a) => a.stop()));
    await owner?.end();
  });

  it('a production app connected as a superuser or the tables owner refuses to boot, naming DATABASE_URL', () => {
    // The run's DATABASE_URL is the migration runner's: the tables' owner (a superuser here).
    const run = spawnSync(process.execPath, ['dist/apps/settlement/src/main.js'], {
      env: { ...process.env, NODE_ENV: 'production', HEALTH_PORT: '0' },
      encoding: 'utf8',
      timeout: 30_000,
    });
    expect(run.status).toBe(1);
    expect(run.stderr).toMatch(
      /settlement failed to start: (?:Error: )?DATABASE_URL connects as "[^"]+", (a superuser|the owner of the gateway's tables): settlement must connect as its own role gateway_settlement/,
    );
  });

  it('outside production the same app boots and warns once; under its own role it says nothing', async () => {
    const asOwner = await startApp('settlement', {}, { databaseUser: 'owner', label: 'settlement-as-owner' });
    started.push(asOwner);
    const log = await asOwner.waitForLog('must connect as its own role gateway_settlement');
    expect(log.match(/must connect as its own role/g)).toHaveLength(1);
    const asRole = await startApp('settlement');
    started.push(asRole);
    expect(asRole.log()).not.toContain('must connect as its own role');
  });

  it('a statement outside the role grants is a 500 without detail for the caller, and a clear log line for the operator', async () => {
    const api = await startApp('api', { MERCHANT_CACHE_MS: '0' });
    started.push(api);
    const shop = await createMerchant('roles-refused');
    const receiver = receiverOf(api.url, shop);
    expect((await receiver('report', { reference: 'nothing-yet' })).status).toBe(404);
    // A grant the api needs, taken away (as a missing line in ROLE_GRANTS would leave it).
    await owner.query('REVOKE SELECT ON transactions FROM gateway_api');
    try {
      const refused = await receiver('report', { reference: 'nothing-yet' });
      expect(refused.status).toBe(500);
      expect(JSON.stringify(refused.json)).not.toMatch(/permission|transactions|42501/);
      const log = await api.waitForLog('42501');
      expect(log).toMatch(/refused by the database: this app's role lacks a grant/);
      expect(log).toContain('permission denied for table transactions');
    } finally {
      // Back to exactly the map, the way a later migration re-applies it.
      await applyRoleGrants({ query: async (sql: string, params?: unknown[]) => (await owner.query(sql, params)).rows });
    }
    expect((await receiver('report', { reference: 'nothing-yet' })).status).toBe(404);
  });

  it('on a server that checks passwords, the migration sets each role password from DB_PASSWORD_* and the app logs in with it', async () => {
    // A cluster of its own: the shared roles' passwords are not this test's to change.
    const pg = await startPrivatePostgres();
    try {
      const hba = join(pg.dir, 'data', 'pg_hba.conf');
      // The owner still trusted (the launcher's user); every other role must give its password.
      writeFileSync(hba, `host all postgres 127.0.0.1/32 trust\nhost all all 127.0.0.1/32 scram-sha-256\n${readFileSync(hba, 'utf8')}`);
      const admin = new Client({ connectionString: pg.url });
      await admin.connect();
      await admin.query('SELECT pg_reload_conf()');
      await admin.query('CREATE DATABASE gateway');
      await admin.end();
      const url = withDatabase(pg.url, 'gateway');
      const passwords = { DB_PASSWORD_API: `api-${process.pid}-p@ss:w/rd`, DB_PASSWORD_OPERATOR: `op-${process.pid}` };
      const migrated = await runNode(migrateEntry(repoRoot()), [], {
        cwd: repoRoot(),
        env: { ...process.env, DATABASE_URL: url, ...passwords },
        timeoutMs: 120_000,
      });
      expect(migrated.code).toBe(0);
      expect(JSON.parse(migrated.stdout.trim().split('\n').pop()!).passwordsSet).toEqual(['gateway_api', 'gateway_operator']);
      expect(migrated.stdout + migrated.stderr).not.toContain(passwords.DB_PASSWORD_API);

      const login = async (connectionString: string): Promise<string> => {
        const c = new Client({ connectionString });
        try {
          await c.connect();
          return (await c.query('SELECT current_user AS u')).rows[0].u;
        } catch (e) {
          return (e as { code?: string }).code ?? String(e);
        } finally {
          await c.end().catch(() => undefined);
        }
      };
      expect(await login(roleUrl(url, 'api', passwords))).toBe('gateway_api');
      expect(await login(withUser(url, 'gateway_api', 'wrong'))).toBe('28P01');
      // A role whose variable was not set has no password: it cannot log in on such a server.
      expect(await login(roleUrl(url, 'tokenizer', passwords))).toMatch(/^(28P01|Error: .*password)/);

      const api = await startApp('api', { DATABASE_URL: url, ...passwords }, { label: 'api-password' });
      started.push(api);
      expect((await fetch(`${api.url}/health`)).status).toBe(200);
      await api.stop();
    } finally {
      await pg.destroy();
    }
  });
});
