import { chmodSync, existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { randomBytes } from 'node:crypto';
import { Client } from 'pg';
import { APPS, appEntry, cliEntry, migrateDatabase, runOperatorCli } from '../lib/launcher';
import { databaseName } from '../lib/database';
import { KEY_VARIABLES, KeySet } from '../lib/dev-keys';
import { DevInstance } from '../lib/dev-instance';
import { bootstrapAdmin, operatorTokenActive } from '../lib/operators';
import { migrateEntry } from '../lib/processes';
import { say, shortPath, StartError } from './output';

// One-time development state: the build, the schema, the sandbox merchant, the development admin, the apps' environment.

export interface SandboxMerchant {
  merchantId: string;
  merchantKey: string;
  webhookSecret: string;
}

export function requireBuild(root: string): void {
  const missing = [...APPS.map((a) => appEntry(root, a.name)), cliEntry(root), migrateEntry(root)].filter((f) => !existsSync(f));
  if (missing.length)
    throw new StartError(`the build is missing ${missing.map(shortPath).join(', ')}: run "npm run build" (npm start does)`);
}

export async function prepareDatabase(root: string, env: NodeJS.ProcessEnv): Promise<void> {
  const { created, migrations } = await migrateDatabase(root, env).catch((e: Error) => {
    throw new StartError(e.message);
  });
  if (created) say(`postgres: created database ${databaseName(env.DATABASE_URL!)}`);
  say(migrations.length ? `postgres: applied migrations ${migrations.join(', ')}` : 'postgres: schema is up to date');
}

/** Created once; later runs reuse it, unless the database it lived in was reset. */
export async function ensureSandboxMerchant(root: string, dataDir: string, env: NodeJS.ProcessEnv): Promise<SandboxMerchant> {
  const file = join(dataDir, 'sandbox-merchant.json');
  const saved = existsSync(file) ? parseJson<SandboxMerchant>(readFileSync(file, 'utf8')) : undefined;
  if (saved?.merchantId && (await merchantExists(env.DATABASE_URL!, saved.merchantId))) return saved;
  if (saved) say('the saved sandbox merchant is not in this database (was it reset?): creating a new one');
  const r = await runOperatorCli<SandboxMerchant>(root, ['merchant:create', '--name', 'sandbox'], env);
  if (r.code !== 0 || r.json === undefined) throw new StartError(`creating the sandbox merchant failed:\n${r.stderr.trim()}`);
  const merchant = r.json;
  writeFileSync(file, JSON.stringify(merchant, null, 2) + '\n', { mode: 0o600 });
  chmodSync(file, 0o600);
  return merchant;
}

export interface DevOperator {
  operator: string;
  token: string;
}

/**
 * The developer's admin operator: bootstrapped on a fresh database (operator:create without a
 * token), its token saved next to the sandbox merchant and passed as GATEWAY_OPERATOR_TOKEN to
 * the CLI calls of this script (never to the apps, which do not need it). Kept while it is active;
 * with an active admin but no usable saved token, the developer's own GATEWAY_OPERATOR_TOKEN (if any) is what the CLI uses.
 */
export async function ensureDevOperator(root: string, dataDir: string, env: NodeJS.ProcessEnv): Promise<DevOperator | undefined> {
  const file = join(dataDir, 'dev-operator.json');
  const saved = existsSync(file) ? parseJson<DevOperator>(readFileSync(file, 'utf8')) : undefined;
  if (saved?.token && (await operatorTokenActive(env.DATABASE_URL!, saved.token)) !== false) return saved;
  let issued: DevOperator;
  try {
    issued = await bootstrapAdmin(root, env, `dev-admin-${randomBytes(3).toString('hex')}`);
  } catch (e) {
    say(`no development admin: ${(e as Error).message.split('\n')[0]}`);
    say('(an active admin exists: have it run operator:create for you, then set GATEWAY_OPERATOR_TOKEN)');
    return undefined;
  }
  writeFileSync(file, JSON.stringify({ operator: issued.operator, token: issued.token }, null, 2) + '\n', { mode: 0o600 });
  chmodSync(file, 0o600);
  say(`created the development admin ${issued.operator}`);
  return issued;
}

async function merchantExists(databaseUrl: string, merchantId: string): Promise<boolean> {
  const client = new Client({ connectionString: databaseUrl, connectionTimeoutMillis: 5000 });
  try {
    await client.connect();
    // A saved merchant has its public id (or, saved before public ids, its UUID).
    const { rowCount } = await client.query('SELECT 1 FROM merchants WHERE public_id = $1 OR id::text = lower($1)', [merchantId]);
    return rowCount === 1;
  } catch {
    // If the schema moved on and we can't tell, keep the saved merchant rather than pile up new ones.
    return true;
  } finally {
    await client.end().catch(() => undefined);
  }
}

/** What every child gets: our environment, the dev keys where it sets none, and the servers. */
export function appEnvironment(
  keys: KeySet,
  dataDir: string,
  infra: { databaseUrl: string; redisUrl: string },
  instance: DevInstance,
): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = { ...process.env };
  for (const k of KEY_VARIABLES) if (!env[k]) env[k] = keys[k];
  return {
    ...env,
    DATABASE_URL: infra.databaseUrl,
    REDIS_URL: infra.redisUrl,
    QUEUE_PREFIX: env.QUEUE_PREFIX || instance.queuePrefix,
    DATA_DIR: dataDir,
    NODE_ENV: 'development',
    // The sandbox merchant's listener is usually on this machine: webhooks may reach loopback.
    WEBHOOK_ALLOW_NETWORKS: env.WEBHOOK_ALLOW_NETWORKS ?? '127.0.0.0/8,::1/128',
  };
}

function parseJson<T>(text: string): T | undefined {
  try {
    return JSON.parse(text) as T;
  } catch {
    return undefined;
  }
}
