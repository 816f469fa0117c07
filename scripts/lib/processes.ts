import { spawn, SpawnOptions } from 'node:child_process';
import { accessSync, constants, existsSync } from 'node:fs';
import { delimiter, join, resolve } from 'node:path';

/** The repository root, from either `scripts/lib` (ts-jest) or `dist/scripts/lib` (built). */
export function repoRoot(): string {
  let dir = resolve(__dirname);
  while (!existsSync(join(dir, 'package.json'))) {
    const up = resolve(dir, '..');
    if (up === dir) throw new Error(`no package.json above ${__dirname}`);
    dir = up;
  }
  return dir;
}

/** Where the build puts an entry point; apps and scripts are always started from the built JS. */
export function distEntry(root: string, ...parts: string[]): string {
  return join(root, 'dist', ...parts);
}

export const migrateEntry = (root: string): string => distEntry(root, 'libs', 'persistence', 'src', 'migrate.js');

export interface RunResult {
  code: number | null;
  signal: NodeJS.Signals | null;
  stdout: string;
  stderr: string;
}

export interface RunOptions extends Pick<SpawnOptions, 'cwd' | 'env'> {
  timeoutMs?: number;
}

/**
 * Runs a command to completion and collects its output. Async (not spawnSync) so that callers
 * inside a test process or the quick start keep serving their other children meanwhile.
 */
export function run(cmd: string, args: string[], opts: RunOptions = {}): Promise<RunResult> {
  return new Promise((resolvePromise, reject) => {
    const child = spawn(cmd, args, { cwd: opts.cwd, env: opts.env ?? process.env, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d) => (stdout += d));
    child.stderr.on('data', (d) => (stderr += d));
    const timer = opts.timeoutMs
      ? setTimeout(() => {
          stderr += `\n(killed after ${opts.timeoutMs} ms)`;
          child.kill('SIGKILL');
        }, opts.timeoutMs)
      : undefined;
    child.on('error', (e) => {
      if (timer) clearTimeout(timer);
      reject(e);
    });
    child.on('close', (code, signal) => {
      if (timer) clearTimeout(timer);
      resolvePromise({ code, signal, stdout, stderr });
    });
  });
}

/** Like run, but a non-zero exit is an error that carries the command's own words. */
export async function runOrThrow(cmd: string, args: string[], opts: RunOptions = {}): Promise<RunResult> {
  const r = await run(cmd, args, opts);
  if (r.code !== 0) {
    const out = (r.stderr.trim() || r.stdout.trim()).split('\n').slice(-15).join('\n');
    throw new Error(`${cmd} ${args.join(' ')} failed (exit ${r.code ?? r.signal}):\n${out}`);
  }
  return r;
}

/** A built entry point run with node; e.g. the migration runner or the CLI. */
export function runNode(script: string, args: string[], opts: RunOptions = {}): Promise<RunResult> {
  if (!existsSync(script)) {
    return Promise.reject(new Error(`${script} does not exist: run "npm run build" first`));
  }
  return run(process.execPath, [script, ...args], opts);
}

/** The CLI prints exactly one JSON document on stdout; progress goes to stderr. */
export function lastJsonLine<T>(stdout: string): T {
  const line = stdout.trim().split('\n').filter(Boolean).pop();
  if (!line) throw new Error('no output on stdout');
  return JSON.parse(line) as T;
}

/** PATH lookup without spawning a shell. */
export function which(cmd: string): string | undefined {
  for (const dir of (process.env.PATH ?? '').split(delimiter)) {
    if (!dir) continue;
    const candidate = join(dir, cmd);
    try {
      accessSync(candidate, constants.X_OK);
      return candidate;
    } catch {
      // not in this PATH entry
    }
  }
  return undefined;
}

export const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

/**
 * The promise's value, or undefined after `ms`. The timer is cleared either way: a pending timer
 * would keep a test process (and jest) alive for nothing.
 */
export async function within<T>(promise: Promise<T>, ms: number): Promise<T | undefined> {
  let timer: NodeJS.Timeout | undefined;
  try {
    return await Promise.race([promise, new Promise<undefined>((r) => (timer = setTimeout(() => r(undefined), ms)))]);
  } finally {
    clearTimeout(timer);
  }
}

/** Polls until check() returns a value other than undefined/false, or throws the last reason. */
export async function waitUntil<T>(
  what: string,
  check: () => Promise<T | undefined | false>,
  timeoutMs: number,
  intervalMs = 250,
): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  let last: unknown;
  for (;;) {
    try {
      const v = await check();
      if (v !== undefined && v !== false) return v;
    } catch (e) {
      last = e;
    }
    if (Date.now() > deadline) {
      throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}${last ? `: ${(last as Error).message}` : ''}`);
    }
    await sleep(intervalMs);
  }
}
