import { ChildProcess, spawn } from 'node:child_process';
import { closeSync, copyFileSync, mkdirSync, openSync, renameSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { logTail } from './local-servers';
import { sleep, which, within } from './processes';

/**
 * A Prometheus beside the quick start's apps (`npm start -- --with-prometheus`): the scrape config
 * and alert rules of deploy/prometheus, copied into the data folder, and a file_sd targets file
 * there naming every app and replica the launcher runs (and Prometheus itself).
 */

/** One process to scrape: where its /metrics answers, and what it is. */
export interface ScrapeTarget {
  /** The app's name (tokenizer, api…), or prometheus. */
  app: string;
  /** The replica's name as the launcher prints it (tokenizer-2, or the app's name when it runs alone). */
  replica: string;
  /** http://host:port */
  url: string;
}

/** The file_sd document for `targets`: one group per target, labelled with its app and replica. */
export function fileSdTargets(targets: readonly ScrapeTarget[]): { targets: string[]; labels: Record<string, string> }[] {
  return targets.map((t) => ({ targets: [new URL(t.url).host], labels: { app: t.app, replica: t.replica } }));
}

/** Where the launcher keeps Prometheus's config (copied from deploy/prometheus) and its targets. */
export const prometheusConfigDir = (dataDir: string): string => join(dataDir, 'prometheus-config');
export const targetsFile = (dataDir: string): string => join(prometheusConfigDir(dataDir), 'targets', 'gateway.json');

/**
 * Writes the targets file in one step (a temporary file renamed over it), so Prometheus, which
 * watches it, never reads half of one.
 */
export function writeTargets(dataDir: string, targets: readonly ScrapeTarget[]): void {
  const file = targetsFile(dataDir);
  mkdirSync(join(prometheusConfigDir(dataDir), 'targets'), { recursive: true });
  writeFileSync(`${file}.tmp`, JSON.stringify(fileSdTargets(targets), null, 2) + '\n');
  renameSync(`${file}.tmp`, file);
}

export interface RunningPrometheus {
  url: string;
  proc: ChildProcess;
  logFile: string;
  /** Rewrites the targets file with these apps (and Prometheus itself); Prometheus reads it within 10 s. */
  setTargets(targets: readonly ScrapeTarget[]): void;
  stop(): Promise<void>;
}

export interface PrometheusOptions {
  root: string;
  dataDir: string;
  logFile: string;
  /** 127.0.0.1:<port>; default 9090. */
  port?: number;
  /** The apps to scrape (Prometheus adds itself). */
  targets: readonly ScrapeTarget[];
}

/** Is a prometheus binary on PATH? */
export const prometheusBinary = (): string | undefined => which('prometheus');

/**
 * Copies deploy/prometheus's prometheus.yml and alerts.yml into the data folder, writes the
 * targets, and starts prometheus (its data in <data>/prometheus) on 127.0.0.1:<port>; resolves
 * once it is ready. Its own process group: a terminal's Ctrl-C reaches only the launcher, which
 * stops it with the stack.
 */
export async function startPrometheus(opts: PrometheusOptions): Promise<RunningPrometheus> {
  const binary = prometheusBinary();
  if (!binary) throw new Error('prometheus is not on PATH');
  const port = opts.port ?? 9090;
  const url = `http://127.0.0.1:${port}`;
  const config = prometheusConfigDir(opts.dataDir);
  mkdirSync(config, { recursive: true });
  for (const f of ['prometheus.yml', 'alerts.yml']) copyFileSync(join(opts.root, 'deploy', 'prometheus', f), join(config, f));
  const setTargets = (targets: readonly ScrapeTarget[]) =>
    writeTargets(opts.dataDir, [...targets, { app: 'prometheus', replica: 'prometheus', url }]);
  setTargets(opts.targets);
  const fd = openSync(opts.logFile, 'a');
  let proc: ChildProcess;
  try {
    const args = [
      `--config.file=${join(config, 'prometheus.yml')}`,
      `--storage.tsdb.path=${join(opts.dataDir, 'prometheus')}`,
      `--web.listen-address=127.0.0.1:${port}`,
    ];
    proc = spawn(binary, args, { stdio: ['ignore', fd, fd], detached: true });
  } finally {
    closeSync(fd);
  }
  const exited = new Promise<void>((resolve) => proc.once('exit', () => resolve()));
  const running: RunningPrometheus = {
    url,
    proc,
    logFile: opts.logFile,
    setTargets,
    async stop() {
      if (proc.exitCode !== null || proc.signalCode !== null) return;
      proc.kill('SIGTERM');
      if ((await within(exited, 10_000)) === undefined) {
        proc.kill('SIGKILL');
        await exited;
      }
    },
  };
  try {
    await waitReady(running, 30_000);
  } catch (e) {
    await running.stop();
    throw e;
  }
  return running;
}

async function waitReady(p: RunningPrometheus, timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    if (p.proc.exitCode !== null) {
      throw new Error(`prometheus exited (code ${p.proc.exitCode}) before it was ready. ${p.logFile}:\n${logTail(p.logFile, 15)}`);
    }
    try {
      if ((await fetch(`${p.url}/-/ready`, { signal: AbortSignal.timeout(1_000) })).ok) return;
    } catch {
      // not listening yet
    }
    await sleep(250);
  }
  throw new Error(`prometheus was not ready at ${p.url} within ${timeoutMs / 1000} s. ${p.logFile}:\n${logTail(p.logFile, 15)}`);
}
