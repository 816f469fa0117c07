import { Client } from 'pg';
// Relative path: the test run's global setup loads this without the suites' module mapping.
import { connectRedis } from '../../libs/platform/src/redis';
import { canConnect } from './probes';

export { onLoopbackPort } from './local-servers';
import { APP_ROLES, RoleOwner } from '../../libs/persistence/src/role-catalogue';
import { ROLE_PASSWORD_VARIABLES } from '../../libs/persistence/src/role-settings';

export const DEFAULT_DATABASE_URL = 'postgres://postgres@127.0.0.1:5432/gateway';
export const DEFAULT_REDIS_URL = 'redis://127.0.0.1:6379';

/** The same server, another database. */
export function withDatabase(url: string, database: string): string {
  const u = new URL(url);
  u.pathname = `/${encodeURIComponent(database)}`;
  return u.toString();
}

/** The same server and database, as another user; with `password` when given, else none (trust, .pgpass). */
export function withUser(url: string, user: string, password?: string): string {
  const u = new URL(url);
  u.username = encodeURIComponent(user);
  u.password = password ? encodeURIComponent(password) : '';
  return u.toString();
}

/**
 * What an app (or the operator CLI: 'cli') connects with: `url` (the owner's, as the migration
 * runner uses it) as the app's own role, with the password its DB_PASSWORD_* variable holds.
 */
export function roleUrl(url: string, app: RoleOwner, env: NodeJS.ProcessEnv = process.env): string {
  const role = APP_ROLES[app];
  return withUser(url, role, env[ROLE_PASSWORD_VARIABLES[role]]);
}

/** Where the migration runner connects (as the tables' owner): MIGRATION_DATABASE_URL when set, else DATABASE_URL. */
export function migrationUrl(env: NodeJS.ProcessEnv): string {
  return env.MIGRATION_DATABASE_URL || env.DATABASE_URL!;
}

export function databaseName(url: string): string {
  const name = decodeURIComponent(new URL(url).pathname.replace(/^\//, ''));
  if (!name) throw new Error(`no database name in ${redactUrl(url)}`);
  return name;
}

/** The maintenance database every server has: where CREATE/DROP DATABASE are issued from. */
export const maintenanceUrl = (url: string): string => withDatabase(url, 'postgres');

export function withPort(url: string, port: number): string {
  const u = new URL(url);
  u.port = String(port);
  return u.toString();
}

export function urlPort(url: string, fallback: number): number {
  const p = new URL(url).port;
  return p ? Number(p) : fallback;
}

export function isLoopbackUrl(url: string): boolean {
  return ['127.0.0.1', 'localhost', '[::1]', '::1'].includes(new URL(url).hostname);
}

/** For messages: a password in a URL never reaches a console or a log. */
export function redactUrl(url: string): string {
  try {
    const u = new URL(url);
    if (u.password) u.password = '***';
    return u.toString();
  } catch {
    return '(invalid URL)';
  }
}

export type Probe = { ok: true } | { ok: false; portOpen: boolean; error: string };

/**
 * Reachable means usable: a TCP connect alone would accept any program on the port, so Postgres
 * must also answer a query (on the maintenance database: ours may not exist yet).
 */
export async function probePostgres(url: string): Promise<Probe> {
  const u = new URL(url);
  const portOpen = await canConnect(urlPort(url, 5432), u.hostname.replace(/^\[|\]$/g, ''));
  if (!portOpen) return { ok: false, portOpen, error: 'nothing listens on that port' };
  const client = new Client({ connectionString: maintenanceUrl(url), connectionTimeoutMillis: 3000 });
  client.on('error', () => undefined);
  try {
    await client.connect();
    await client.query('SELECT 1');
    return { ok: true };
  } catch (e) {
    return { ok: false, portOpen, error: (e as Error).message };
  } finally {
    await client.end().catch(() => undefined);
  }
}

export async function probeRedis(url: string): Promise<Probe> {
  const u = new URL(url);
  const portOpen = await canConnect(urlPort(url, 6379), u.hostname.replace(/^\[|\]$/g, ''));
  if (!portOpen) return { ok: false, portOpen, error: 'nothing listens on that port' };
  // No retries and no offline queue: one honest answer now, not a client that keeps trying.
  const redis = connectRedis(
    { url },
    {
      lazyConnect: true,
      connectTimeout: 2000,
      maxRetriesPerRequest: 0,
      retryStrategy: () => null,
      enableOfflineQueue: false,
    },
  );
  redis.on('error', () => undefined);
  try {
    await redis.connect();
    const pong: string = await redis.ping();
    return pong === 'PONG' ? { ok: true } : { ok: false, portOpen, error: `PING answered ${pong}` };
  } catch (e) {
    return { ok: false, portOpen, error: (e as Error).message };
  } finally {
    redis.disconnect();
  }
}

async function withMaintenance<T>(url: string, fn: (c: Client) => Promise<T>): Promise<T> {
  const client = new Client({ connectionString: maintenanceUrl(url), connectionTimeoutMillis: 5000 });
  client.on('error', () => undefined);
  await client.connect();
  try {
    return await fn(client);
  } finally {
    await client.end().catch(() => undefined);
  }
}

const quoteIdent = (name: string) => `"${name.replace(/"/g, '""')}"`;

/** Creates the database named in `url` when it is missing. Returns whether it created it. */
export async function createDatabaseIfMissing(url: string): Promise<boolean> {
  const name = databaseName(url);
  return withMaintenance(url, async (c) => {
    const { rowCount } = await c.query('SELECT 1 FROM pg_database WHERE datname = $1', [name]);
    if (rowCount) return false;
    try {
      await c.query(`CREATE DATABASE ${quoteIdent(name)}`);
      return true;
    } catch (e) {
      // Someone else created it between our check and our CREATE: that is what we wanted.
      if ((e as { code?: string }).code === '42P04') return false;
      throw e;
    }
  });
}

/** FORCE: apps a failed test left running must not keep a test database alive. */
export async function dropDatabase(url: string): Promise<void> {
  const name = databaseName(url);
  await withMaintenance(url, (c) => c.query(`DROP DATABASE IF EXISTS ${quoteIdent(name)} WITH (FORCE)`));
}

/** The internal id (UUID) of the merchant with this public id (what merchant:create printed). */
export async function merchantInternalId(url: string, publicId: string): Promise<string> {
  const db = new Client({ connectionString: url });
  await db.connect();
  try {
    const { rows } = await db.query<{ id: string }>('SELECT id FROM merchants WHERE public_id = $1', [publicId]);
    if (!rows[0]) throw new Error(`no merchant with public id ${publicId}`);
    return rows[0].id;
  } finally {
    await db.end();
  }
}
