import { ChildProcess, spawn } from 'node:child_process';
import { closeSync, createWriteStream, existsSync, openSync, WriteStream } from 'node:fs';
import { createInterface } from 'node:readline';
import { Readable } from 'node:stream';
import { createDatabaseIfMissing, migrationUrl, roleUrl } from './database';
import { logTail } from './local-servers';
import { distEntry, lastJsonLine, migrateEntry, runNode, sleep, within } from './processes';

/**
 * How the gateway's processes are run, for the three launchers (the quick start, the bench and the
 * integration tests): which apps there are, starting one, waiting for its /health, stopping it,
 * migrating a database and running the operator CLI. Ports, log folders and extra environment
 * are each launcher's own choice.
 */

export type AppName = 'tokenizer' | 'settlement' | 'notifier' | 'api' | 'console' | 'admin';

export interface AppSpec {
  name: AppName;
  /** Where its /health and /metrics answer: the API's PORT, a worker's HEALTH_PORT. */
  portVariable: 'PORT' | 'HEALTH_PORT';
  /** The port the quick start gives it when that port is free. */
  defaultPort: number;
}

/** Workers first, so the API's first request finds someone to take its jobs. */
export const APPS: readonly AppSpec[] = [
  { name: 'tokenizer', portVariable: 'HEALTH_PORT', defaultPort: 3001 },
  { name: 'settlement', portVariable: 'HEALTH_PORT', defaultPort: 3002 },
  { name: 'notifier', portVariable: 'HEALTH_PORT', defaultPort: 3003 },
  { name: 'api', portVariable: 'PORT', defaultPort: 3000 },
  // The operators' console, the merchants' portal and /admin (the queue dashboard).
  { name: 'console', portVariable: 'PORT', defaultPort: 3100 },
  // Where operator commands run (the CLI sends them there): the only holder of the operator role.
  { name: 'admin', portVariable: 'PORT', defaultPort: 3010 },
];

export const APP_NAMES: readonly AppName[] = APPS.map((a) => a.name);

/** The built entry point of an app (or of the operator CLI); apps always run from the build. */
export const appEntry = (root: string, app: AppName | 'cli'): string => distEntry(root, 'apps', app, 'src', 'main.js');
export const cliEntry = (root: string): string => appEntry(root, 'cli');

/**
 * An app's environment without the operator token: the quick start, the tests and the bench hold
 * an admin's token for their CLI calls, and no app reads it, so an app process (its
 * /proc/<pid>/environ, a crash report, a compromise) must not carry an admin credential.
 */
export function withoutOperatorToken(env: NodeJS.ProcessEnv): NodeJS.ProcessEnv {
  const { GATEWAY_OPERATOR_TOKEN: _token, ...rest } = env;
  return rest;
}

export interface ExitInfo {
  code: number | null;
  signal: NodeJS.Signals | null;
}

export interface LaunchOptions {
  root: string;
  name: AppName;
  /** The whole environment; the launcher adds the app's database role and port, and drops the operator token. */
  env: NodeJS.ProcessEnv;
  port: number;
  logFile: string;
  /** How messages name it (e.g. a second api); default: the app's name. */
  label?: string;
  /** Where its /health is reached; default 127.0.0.1. */
  healthHost?: string;
  /** 'owner': DATABASE_URL as given (the migration runner's user). Default: the app's own role, as in production. */
  databaseUser?: 'role' | 'owner';
  /** Arguments for node before the entry point (e.g. CPU profiling). */
  nodeArgs?: string[];
  /** Own process group (the quick start: a terminal Ctrl-C reaches only the launcher, which stops the apps in order). */
  detached?: boolean;
  /**
   * Also show the app's warnings, errors and non-JSON lines (crash traces) on our stdout; its
   * output then passes through us. Otherwise the app writes straight into its log file, so a busy
   * or dying launcher neither loses its lines nor stalls its writes.
   */
  console?: boolean;
}

export interface LaunchedApp {
  name: AppName;
  label: string;
  port: number;
  /** http://<healthHost>:<port> */
  url: string;
  logFile: string;
  proc: ChildProcess;
  pid: number;
  /** Resolves once the process has ended (and, with `console`, its output is in the log). */
  exited: Promise<ExitInfo>;
  isRunning(): boolean;
  /** Set by stopApp, so an exit asked for is not taken for a crash. */
  stopRequested: boolean;
}

export function launchApp(opts: LaunchOptions): LaunchedApp {
  const entry = appEntry(opts.root, opts.name);
  if (!existsSync(entry)) throw new Error(`${entry} does not exist: run "npm run build" first`);
  const spec = APPS.find((a) => a.name === opts.name)!;
  const env: NodeJS.ProcessEnv = {
    ...withoutOperatorToken(opts.env),
    // Each app as its own role (roles.ts), as in production: a statement outside its grants fails.
    ...(opts.databaseUser === 'owner' ? {} : { DATABASE_URL: roleUrl(opts.env.DATABASE_URL!, opts.name, opts.env) }),
    [spec.portVariable]: String(opts.port),
  };
  const args = [...(opts.nodeArgs ?? []), entry];
  let proc: ChildProcess;
  let log: WriteStream | undefined;
  if (opts.console) {
    log = createWriteStream(opts.logFile, { flags: 'a', mode: 0o600 });
    proc = spawn(process.execPath, args, { cwd: opts.root, env, stdio: ['ignore', 'pipe', 'pipe'], detached: opts.detached });
  } else {
    const fd = openSync(opts.logFile, 'a');
    try {
      proc = spawn(process.execPath, args, { cwd: opts.root, env, stdio: ['ignore', fd, fd], detached: opts.detached });
    } finally {
      closeSync(fd);
    }
  }
  let running = true;
  const label = opts.label ?? opts.name;
  const app: LaunchedApp = {
    name: opts.name,
    label,
    port: opts.port,
    url: `http://${opts.healthHost ?? '127.0.0.1'}:${opts.port}`,
    logFile: opts.logFile,
    proc,
    pid: proc.pid!,
    // 'close', not 'exit': with piped output, by then the pipes are drained and the log has the app's last words.
    exited: new Promise((resolve) =>
      proc.once('close', (code, signal) => {
        running = false;
        log?.end();
        resolve({ code, signal });
      }),
    ),
    isRunning: () => running,
    stopRequested: false,
  };
  if (log) {
    forward(proc.stdout!, label, log);
    forward(proc.stderr!, label, log);
  }
  return app;
}

const LEVELS: Record<number, string> = { 40: 'WARN', 50: 'ERROR', 60: 'FATAL' };

function forward(stream: Readable, label: string, log: WriteStream): void {
  createInterface({ input: stream, crlfDelay: Infinity }).on('line', (line) => {
    if (!log.writableEnded) log.write(line + '\n');
    const status = consoleLine(line);
    if (status) process.stdout.write(`[${label}] ${status}\n`);
  });
}

/** A developer sees trouble without a wall of JSON: warnings and worse, and anything that is not a log entry. */
function consoleLine(line: string): string | undefined {
  if (!line.startsWith('{')) return line.trim() ? line : undefined;
  try {
    const entry = JSON.parse(line) as { level?: number; msg?: string; err?: { message?: string } };
    const level = LEVELS[entry.level ?? 0];
    if (!level) return undefined;
    return `${level} ${entry.msg ?? ''}${entry.err?.message ? `: ${entry.err.message}` : ''}`;
  } catch {
    return line;
  }
}

/**
 * Polls /health until it answers 200; fails at once when the app exits first, and after
 * `timeoutMs` with the last answer. Either way the error ends with the tail of the app's log.
 */
export async function waitForHealth(app: LaunchedApp, timeoutMs: number, intervalMs = 200): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  let last = 'no answer';
  while (Date.now() < deadline) {
    if (!app.isRunning()) {
      const { code, signal } = await app.exited;
      throw new Error(
        `${app.label} exited (${signal ?? `code ${code}`}) before it was ready. ${app.logFile}:\n${logTail(app.logFile, 30)}`,
      );
    }
    try {
      const res = await fetch(`${app.url}/health`, { signal: AbortSignal.timeout(2_000) });
      if (res.status === 200) return;
      last = `HTTP ${res.status}: ${(await res.text()).slice(0, 300)}`;
    } catch (e) {
      last = (e as Error).message;
    }
    await sleep(intervalMs);
  }
  throw new Error(`${app.label} /health was not 200 within ${timeoutMs} ms (last: ${last}). ${app.logFile}:\n${logTail(app.logFile, 30)}`);
}

export interface StopOptions {
  /** SIGTERM (default) lets the app drain in-flight requests and jobs; SIGKILL is a crash, as far as it can tell. */
  signal?: NodeJS.Signals;
  /** How long it may take before SIGKILL; Infinity waits for it however long it takes. Default 20 s. */
  graceMs?: number;
  /** Told when the grace runs out and the app is killed. */
  say?: (line: string) => void;
}

export async function stopApp(app: LaunchedApp, opts: StopOptions = {}): Promise<ExitInfo> {
  const { signal = 'SIGTERM', graceMs = 20_000 } = opts;
  app.stopRequested = true;
  if (app.isRunning()) app.proc.kill(signal);
  if (graceMs === Infinity) return app.exited;
  const ended = await within(app.exited, graceMs);
  if (ended) return ended;
  opts.say?.(`${app.label} did not stop within ${graceMs / 1000} s; killing it`);
  app.proc.kill('SIGKILL');
  return app.exited;
}

/**
 * Creates the database the migration URL names (MIGRATION_DATABASE_URL, else DATABASE_URL) when it
 * is missing, then runs the migration runner as that URL's user (the tables' owner): pending
 * migrations, and the app roles' passwords.
 */
export async function migrateDatabase(
  root: string,
  env: NodeJS.ProcessEnv,
  timeoutMs = 120_000,
): Promise<{ created: boolean; migrations: string[] }> {
  const created = await createDatabaseIfMissing(migrationUrl(env));
  const r = await runNode(migrateEntry(root), [], { cwd: root, env, timeoutMs });
  if (r.code !== 0) throw new Error(`migrations failed (exit ${r.code}):\n${r.stderr.trim() || r.stdout.trim()}`);
  let migrations: string[] = [];
  try {
    migrations = lastJsonLine<{ migrations?: string[] }>(r.stdout).migrations ?? [];
  } catch {
    // applied, but it did not say what: nothing to report
  }
  return { created, migrations };
}

export interface CliRun<T> {
  code: number | null;
  signal: NodeJS.Signals | null;
  stdout: string;
  stderr: string;
  /** The JSON document the CLI printed on stdout, when it printed one. */
  json: T | undefined;
}

/**
 * Runs the operator CLI as an operator's shell would: as the operator's database role, with
 * `env`'s DATABASE_URL (the owner's) turned into that role's. Reports however it ended.
 */
export async function runOperatorCli<T = Record<string, unknown>>(
  root: string,
  args: string[],
  env: NodeJS.ProcessEnv,
  timeoutMs = 60_000,
): Promise<CliRun<T>> {
  const r = await runNode(cliEntry(root), args, {
    cwd: root,
    env: { ...env, DATABASE_URL: roleUrl(env.DATABASE_URL!, 'cli', env) },
    timeoutMs,
  });
  let json: T | undefined;
  try {
    // The CLI prints exactly one JSON document on stdout; progress goes to stderr.
    json = lastJsonLine<T>(r.stdout);
  } catch {
    json = undefined;
  }
  return { ...r, json };
}

/**
 * The operator CLI's JSON answer; a failure rejects with the CLI's own error message (it prints
 * `{"error": …}` on stderr), so callers can match on it.
 */
export async function operatorCliJson<T = Record<string, unknown>>(
  root: string,
  args: string[],
  env: NodeJS.ProcessEnv,
  timeoutMs = 60_000,
): Promise<T> {
  const r = await runOperatorCli<T>(root, args, env, timeoutMs);
  if (r.code !== 0 || r.json === undefined) {
    const lastErr = r.stderr.trim().split('\n').pop() ?? '';
    let message = lastErr;
    try {
      message = (JSON.parse(lastErr) as { error?: string }).error ?? lastErr;
    } catch {
      // not JSON: a crash trace, shown as is
    }
    throw new Error(`cli ${args.join(' ')} failed (exit ${r.code}): ${message || r.stdout.trim()}`);
  }
  return r.json;
}
