import { ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { existsSync, mkdirSync, mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  freePort,
  logTail,
  PrivateServer,
  startPgBouncer,
  startPrivatePostgresCluster,
  startPrivateRedisServer,
} from '../../scripts/lib/local-servers';
import { merchantInternalId } from '../../scripts/lib/database';
import {
  AppName,
  APP_NAMES,
  appEntry,
  CliRun,
  ExitInfo,
  launchApp,
  operatorCliJson,
  runOperatorCli,
  stopApp,
  waitForHealth,
} from '../../scripts/lib/launcher';
import { repoRoot, sleep } from '../../scripts/lib/processes';
import { remember } from './leftovers';

/**
 * Boots the real, built apps as child processes for end-to-end tests, each on a free port and
 * logging to its own file in the run's log folder (the canary scan reads every file there).
 */

export type { AppName, CliRun, ExitInfo };
export { APP_NAMES };

export interface StartAppOptions {
  /** A fixed port, e.g. to restart an app where its clients expect it. Default: a free one. */
  port?: number;
  /** How long /health may take to answer 200. Default 30 s. */
  readyTimeoutMs?: number;
  /** false: return as soon as the process is spawned (for tests of a failing boot). */
  waitForReady?: boolean;
  /** Log file name prefix. Default: the app name. */
  label?: string;
  /** 'owner': connect with DATABASE_URL as given (the migration runner's user). Default: the app's own role. */
  databaseUser?: 'role' | 'owner';
}

export interface AppHandle {
  name: AppName;
  /** How it is named in messages and its log file: the app's name, or e.g. tokenizer-2 for a replica. */
  label: string;
  proc: ChildProcess;
  pid: number;
  /** PORT for the api, HEALTH_PORT for a worker: where /health and /metrics answer. */
  port: number;
  healthPort: number;
  /** http://127.0.0.1:<port> */
  url: string;
  logFile: string;
  /** Resolves when the process has ended. */
  exited: Promise<ExitInfo>;
  isRunning(): boolean;
  /** Everything it has logged so far. */
  log(): string;
  /** Waits until its log matches; resolves with the whole log. */
  waitForLog(pattern: string | RegExp, timeoutMs?: number): Promise<string>;
  /** Sends `signal` (SIGTERM: graceful drain), waits, SIGKILLs after `timeoutMs`; resolves with the exit code. */
  stop(signal?: NodeJS.Signals, timeoutMs?: number): Promise<number | null>;
  /** SIGKILL: a crash, as far as the app can tell. */
  kill(): Promise<number | null>;
}

const root = repoRoot();

/** The run's log folder (set by the global setup); a fallback keeps a lone test file runnable. */
export function logDir(): string {
  const dir = process.env.TEST_LOG_DIR ?? join(root, 'test', '.logs', 'adhoc');
  mkdirSync(dir, { recursive: true });
  return dir;
}

export async function startApp(name: AppName, env: Record<string, string> = {}, opts: StartAppOptions = {}): Promise<AppHandle> {
  const port = opts.port ?? (await freePort());
  const label = opts.label ?? name;
  // Unique without a counter: jest gives each test file fresh module state, and a repeated name
  // would mix two suites' logs in one file. The child writes straight into it: nothing is lost if
  // the test process is busy or dies.
  const logFile = join(logDir(), `${label}-${port}-${randomBytes(3).toString('hex')}.log`);
  const app = launchApp({
    root,
    name,
    label,
    env: { ...process.env, ...env, HOST: env.HOST ?? '127.0.0.1' },
    port,
    logFile,
    databaseUser: opts.databaseUser,
  });
  const forget = remember({ kind: 'process', pid: app.pid, label: `${name} app`, marker: appEntry(root, name) });
  void app.exited.then(forget);

  const handle: AppHandle = {
    name,
    label,
    proc: app.proc,
    pid: app.pid,
    port,
    healthPort: port,
    url: app.url,
    logFile,
    exited: app.exited,
    isRunning: () => app.isRunning(),
    log: () => readFileSync(logFile, 'utf8'),
    waitForLog: (pattern, timeoutMs = 10_000) =>
      eventually(
        () => {
          const text = handle.log();
          if (typeof pattern === 'string' ? !text.includes(pattern) : !pattern.test(text)) {
            throw new Error(`${name} log does not match ${pattern}; last lines:\n${logTail(logFile)}`);
          }
          return text;
        },
        { timeoutMs },
      ),
    async stop(signal = 'SIGTERM', timeoutMs = 20_000) {
      return (await stopApp(app, { signal, graceMs: timeoutMs })).code;
    },
    kill: () => handle.stop('SIGKILL'),
  };

  if (opts.waitForReady !== false) {
    try {
      await waitForHealth(app, opts.readyTimeoutMs ?? 30_000);
    } catch (e) {
      await handle.kill();
      throw e;
    }
  }
  return handle;
}

// ---------------------------------------------------------------------------------------------

export interface StackOptions {
  /** Extra environment for one app (wins over the stack-wide env). */
  envFor?: Partial<Record<AppName, Record<string, string>>>;
  readyTimeoutMs?: number;
  /** Also the admin app (operator commands over HTTP), started once the api is up; the console with it. */
  withAdmin?: boolean;
  /**
   * Also the console app (/console, /portal, /admin). Its only background work is the retention
   * pass over its own tables (sessions, portal links, the audit), so a suite that does not call it
   * leaves it out: one Nest app fewer to boot on a machine the suites share.
   */
  withConsole?: boolean;
}

/** What every stack runs: the api and the three workers (the console and the admin app only when asked for). */
export const PIPELINE: readonly AppName[] = APP_NAMES.filter((n) => n !== 'admin' && n !== 'console');

export interface Stack {
  /** The api's URL (/v1, /docs). */
  baseUrl: string;
  /** The console app's URL: /console, /portal and /admin (a stack started withConsole or withAdmin). */
  consoleUrl: string;
  api: AppHandle;
  console: AppHandle;
  tokenizer: AppHandle;
  settlement: AppHandle;
  notifier: AppHandle;
  apps: Record<AppName, AppHandle>;
  /** withAdmin: the admin app's URL (GATEWAY_ADMIN_URL for the CLI). */
  adminUrl?: string;
  /** Everything the app logged in this stack, across restarts. */
  logOf(name: AppName): string;
  /** Stops one app (SIGTERM, or SIGKILL for a crash) and starts it again on the same port. */
  restart(name: AppName, signal?: NodeJS.Signals, env?: Record<string, string>): Promise<AppHandle>;
  /** The API first, so no new work arrives while the workers drain. */
  stop(): Promise<void>;
}

/**
 * The pipeline apps (the api and the workers), and the console when asked for, booted in parallel
 * (then the admin app with withAdmin); `env` goes to every one of them.
 */
export async function startStack(env: Record<string, string> = {}, opts: StackOptions = {}): Promise<Stack> {
  const envOf = (name: AppName, extra: Record<string, string> = {}) => ({ ...env, ...opts.envFor?.[name], ...extra });
  const booted: AppName[] = [...PIPELINE, ...(opts.withConsole || opts.withAdmin ? (['console'] as const) : [])];
  const started = await Promise.allSettled(booted.map((name) => startApp(name, envOf(name), { readyTimeoutMs: opts.readyTimeoutMs })));
  const failed = started.filter((r): r is PromiseRejectedResult => r.status === 'rejected');
  if (failed.length) {
    await Promise.all(started.flatMap((r) => (r.status === 'fulfilled' ? [r.value.stop()] : [])));
    throw failed[0].reason;
  }
  const apps = Object.fromEntries(
    started.map((r) => [(r as PromiseFulfilledResult<AppHandle>).value.name, (r as PromiseFulfilledResult<AppHandle>).value]),
  ) as Record<AppName, AppHandle>;
  if (opts.withAdmin) {
    // Portal links the commands print start where merchants reach this stack's console.
    const publicBase = { CONSOLE_PUBLIC_URL: apps.console.url };
    try {
      apps.admin = await startApp('admin', envOf('admin', publicBase), { readyTimeoutMs: opts.readyTimeoutMs });
    } catch (e) {
      await Promise.all(booted.map((n) => apps[n].stop()));
      throw e;
    }
  }
  const running = (): AppName[] => APP_NAMES.filter((n) => apps[n] !== undefined);
  const logFiles = Object.fromEntries(APP_NAMES.map((n) => [n, [] as string[]])) as Record<AppName, string[]>;
  for (const name of running()) logFiles[name].push(apps[name].logFile);

  const stack: Stack = {
    baseUrl: apps.api.url,
    get consoleUrl() {
      return this.console.url;
    },
    adminUrl: apps.admin?.url,
    apps,
    get api() {
      return apps.api;
    },
    get console() {
      if (!apps.console) throw new Error('this stack has no console: start it with { withConsole: true }');
      return apps.console;
    },
    get tokenizer() {
      return apps.tokenizer;
    },
    get settlement() {
      return apps.settlement;
    },
    get notifier() {
      return apps.notifier;
    },
    logOf: (name) => logFiles[name].map((f) => (existsSync(f) ? readFileSync(f, 'utf8') : '')).join(''),
    async restart(name, signal = 'SIGTERM', env = {}) {
      await apps[name].stop(signal);
      apps[name] = await startApp(name, envOf(name, env), { port: apps[name].port, readyTimeoutMs: opts.readyTimeoutMs });
      logFiles[name].push(apps[name].logFile);
      return apps[name];
    },
    async stop() {
      await apps.api.stop();
      await Promise.all(
        running()
          .filter((n) => n !== 'api')
          .map((n) => apps[n].stop()),
      );
    },
  };
  return stack;
}

// ---------------------------------------------------------------------------------------------

export interface MerchantCredentials {
  /** The public id merchant:create printed (10 digits): what envelopes and CLI options carry. */
  merchantId: string;
  merchantKey: string;
  webhookSecret: string;
  /** The internal id (UUID), not printed by the CLI: what every merchant_id column holds. For SQL in tests. */
  internalId: string;
}

/** Runs the operator CLI (`node dist/apps/cli/src/main.js …`) as gateway_operator and reports however it ended. */
export function runCliRaw<T = Record<string, unknown>>(args: string[], env: Record<string, string> = {}): Promise<CliRun<T>> {
  return runOperatorCli<T>(root, args, { ...process.env, ...env });
}

/**
 * Runs the CLI and resolves with the JSON it printed; a failure rejects with the CLI's own error
 * message, so tests can match on it.
 */
export function runCli<T = Record<string, unknown>>(args: string[], env: Record<string, string> = {}): Promise<T> {
  return operatorCliJson<T>(root, args, { ...process.env, ...env });
}

/** A merchant of its own for a suite: `merchant:create --name <name>`, plus its internal id read from the database. */
export async function createMerchant(name: string, env: Record<string, string> = {}): Promise<MerchantCredentials> {
  const printed = await runCli<Omit<MerchantCredentials, 'internalId'>>(['merchant:create', '--name', name], env);
  return { ...printed, internalId: await internalIdOf(printed.merchantId, env.DATABASE_URL ?? process.env.DATABASE_URL!) };
}

/** `n` approved recipients of a merchant (recipient:create, then recipient:approve), named seller 0, seller 1… */
export async function approvedRecipients(merchantId: string, n: number): Promise<string[]> {
  const ids: string[] = [];
  for (let i = 0; i < n; i++) {
    const { recipientId } = await runCli<{ recipientId: string }>(['recipient:create', '--merchant', merchantId, '--name', `seller ${i}`]);
    await runCli(['recipient:approve', '--recipient', recipientId]);
    ids.push(recipientId);
  }
  return ids;
}

/** The internal id (UUID) of the merchant with this public id. */
export const internalIdOf = (publicId: string, databaseUrl = process.env.DATABASE_URL!): Promise<string> =>
  merchantInternalId(databaseUrl, publicId);

export interface HttpResult {
  status: number;
  headers: Record<string, string>;
  /** The parsed body; undefined when it is not JSON. `any` so tests can dig into error bodies. */
  // eslint-disable-next-line @typescript-eslint/no-explicit-any
  json: any;
  text: string;
}

/** POSTs JSON (a string body is sent as is, to test broken JSON). */
export async function post(baseUrl: string, path: string, body: unknown, headers: Record<string, string> = {}): Promise<HttpResult> {
  const res = await fetch(baseUrl + path, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...headers },
    body: typeof body === 'string' ? body : JSON.stringify(body),
  });
  const text = await res.text();
  return { status: res.status, headers: Object.fromEntries(res.headers.entries()), json: jsonOf(text), text };
}

/** An answer's body parsed, or undefined when it is not JSON. */
export function jsonOf(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}

/**
 * Retries `check` until it stops throwing: for effects that happen after the response (a
 * webhook, a payable, a log line). Throws the last failure when time is up.
 */
export async function eventually<T>(check: () => T | Promise<T>, opts: { timeoutMs?: number; intervalMs?: number } = {}): Promise<T> {
  const deadline = Date.now() + (opts.timeoutMs ?? 10_000);
  for (;;) {
    try {
      return await check();
    } catch (e) {
      if (Date.now() > deadline) throw e;
    }
    await sleep(opts.intervalMs ?? 100);
  }
}

// ---------------------------------------------------------------------------------------------
// Private servers for fault tests: stopping the shared ones would break every other suite.

export type { PrivateServer };

/** A redis-server on a spare port, no persistence, in its own temp folder. */
export async function startPrivateRedis(): Promise<PrivateServer> {
  const server = await startPrivateRedisServer({ dir: mkdtempSync(join(tmpdir(), 'gwredis-')), persistent: false, detached: false });
  // redis-server retitles its process "redis-server 127.0.0.1:<port>": that is what we can recognise.
  return tracked(server, (pid) => ({
    kind: 'process',
    pid,
    label: `private redis ${server.port}`,
    marker: `redis-server 127.0.0.1:${server.port}`,
    dir: server.dir,
  }));
}

/** A Postgres cluster of its own (initdb into a temp folder) on a spare port; user postgres, trust. */
export async function startPrivatePostgres(): Promise<PrivateServer> {
  // A short path: the Unix socket lives in this folder and socket paths are limited to ~107 bytes.
  const server = await startPrivatePostgresCluster({ dir: mkdtempSync(join(tmpdir(), 'gwpg-')), durable: false });
  const forget = remember({ kind: 'postgres', dir: server.dir, label: `private postgres ${server.port}` });
  const destroy = server.destroy.bind(server);
  return Object.assign(server, {
    destroy: async () => {
      await destroy();
      forget();
    },
  });
}

/**
 * A PgBouncer of its own in transaction mode on a spare port, in front of the server `upstream`
 * names, admitting its user (the owner: first, so it may open the admin console) and `users`.
 */
export async function startPrivatePgBouncer(upstream: string, users: readonly string[]): Promise<PrivateServer> {
  const owner = decodeURIComponent(new URL(upstream).username) || 'postgres';
  const server = await startPgBouncer({ dir: mkdtempSync(join(tmpdir(), 'gwpgb-')), upstream, users: [owner, ...users] });
  // Its command line names its settings file, in its own folder: that is what we can recognise.
  return tracked(server, (pid) => ({
    kind: 'process',
    pid,
    label: `private pgbouncer ${server.port}`,
    marker: server.dir,
    dir: server.dir,
  }));
}

/** Keeps the cleanup record pointing at the current process across stop/start. */
function tracked(server: PrivateServer, record: (pid: number) => Parameters<typeof remember>[0]): PrivateServer {
  let forget = remember(record(server.pid()!));
  const { start, destroy } = { start: server.start.bind(server), destroy: server.destroy.bind(server) };
  return Object.assign(server, {
    start: async () => {
      await start();
      forget();
      forget = remember(record(server.pid()!));
    },
    destroy: async () => {
      await destroy();
      forget();
    },
  });
}

export { freePort };
