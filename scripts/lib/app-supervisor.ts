import { ChildProcess, spawn } from 'node:child_process';
import { createWriteStream, existsSync, renameSync, WriteStream } from 'node:fs';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { Readable } from 'node:stream';
import { logTail } from './local-servers';
import { appEntry, within } from './processes';

/** One app the quick start runs: its process, where it logs and where its /health answers. */
export interface SupervisedApp {
  name: string;
  port: number;
  healthUrl: string;
  logFile: string;
  proc: ChildProcess;
  /** Set before we stop it on purpose, so its exit is not reported as a crash. */
  stopping: boolean;
  exited: Promise<void>;
}

export interface LaunchOptions {
  root: string;
  name: string;
  env: NodeJS.ProcessEnv;
  port: number;
  portVariable: 'PORT' | 'HEALTH_PORT';
  healthHost: string;
  logsDir: string;
  /** Called when the app ends without being asked to. */
  onUnexpectedExit(app: SupervisedApp, how: string): void;
}

const LEVELS: Record<number, string> = { 40: 'WARN', 50: 'ERROR', 60: 'FATAL' };

/**
 * Starts an app with its output going to `<logsDir>/<name>.log`. The console only gets warnings,
 * errors and non-JSON lines (crash traces), so a developer sees trouble without a wall of JSON.
 */
export function launchApp(opts: LaunchOptions): SupervisedApp {
  const logFile = join(opts.logsDir, `${opts.name}.log`);
  // Keep the previous run's log: after a crash, the interesting lines are usually there.
  if (existsSync(logFile)) renameSync(logFile, `${logFile}.1`);
  const log = createWriteStream(logFile, { flags: 'a', mode: 0o600 });
  const proc = spawn(process.execPath, [appEntry(opts.root, opts.name)], {
    env: { ...opts.env, [opts.portVariable]: String(opts.port) },
    stdio: ['ignore', 'pipe', 'pipe'],
    // Own process group: a terminal Ctrl-C reaches only us, and we stop the apps in order.
    detached: true,
  });
  const app: SupervisedApp = {
    name: opts.name,
    port: opts.port,
    healthUrl: `http://${opts.healthHost}:${opts.port}/health`,
    logFile,
    proc,
    stopping: false,
    exited: new Promise((resolve) =>
      // 'close', not 'exit': by then the pipes are drained, so the log has the app's last words.
      proc.once('close', (code, signal) => {
        log.end();
        if (!app.stopping) opts.onUnexpectedExit(app, signal ? `killed by ${signal}` : `exit code ${code}`);
        resolve();
      }),
    ),
  };
  forward(proc.stdout!, opts.name, log);
  forward(proc.stderr!, opts.name, log);
  return app;
}

function forward(stream: Readable, name: string, log: WriteStream): void {
  createInterface({ input: stream, crlfDelay: Infinity }).on('line', (line) => {
    if (!log.writableEnded) log.write(line + '\n');
    const status = consoleLine(line);
    if (status) process.stdout.write(`[${name}] ${status}\n`);
  });
}

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

/** SIGTERM lets the app drain in-flight requests and jobs; SIGKILL only if it does not end in time. */
export async function stopApp(app: SupervisedApp, graceMs = 20_000): Promise<void> {
  app.stopping = true;
  if (app.proc.exitCode !== null || app.proc.signalCode !== null) return;
  app.proc.kill('SIGTERM');
  const ended = await within(app.exited.then(() => true), graceMs);
  if (!ended) {
    process.stdout.write(`${app.name} did not stop within ${graceMs / 1000} s; killing it\n`);
    app.proc.kill('SIGKILL');
    await app.exited;
  }
}

export async function isHealthy(app: SupervisedApp): Promise<boolean> {
  try {
    const res = await fetch(app.healthUrl, { signal: AbortSignal.timeout(2000) });
    return res.status === 200;
  } catch {
    return false;
  }
}

export function appLogTail(app: SupervisedApp, lines = 15): string {
  return logTail(app.logFile, lines);
}
