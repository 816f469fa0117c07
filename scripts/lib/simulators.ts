/**
 * The acquirer simulators as child processes (`npm start` in development, and the test stack):
 * each serves one acquirer's API on loopback, and the apps are pointed at it through the same
 * variables that name the real hosts in production.
 */
import { ChildProcess, spawn } from 'node:child_process';
import { createWriteStream } from 'node:fs';
import { join } from 'node:path';
import { isPortFree } from './local-servers';

export type SimulatorName = 'cielo' | 'erede';

export interface RunningSimulator {
  name: SimulatorName;
  url: string;
  port: number;
  child: ChildProcess;
  stop(): Promise<void>;
}

/** The variables each simulator stands in for, given its base URL. */
export function simulatorVariables(name: SimulatorName, base: string): Record<string, string> {
  return name === 'cielo' ? { CIELO_API_URL: `${base}/`, CIELO_QUERY_URL: `${base}/` } : { EREDE_API_URL: `${base}/erede` };
}

/** Which simulators to start: those whose acquirer's variables the environment does not set already. */
export function simulatorsWanted(env: NodeJS.ProcessEnv): SimulatorName[] {
  const out: SimulatorName[] = [];
  if (!env.CIELO_API_URL && !env.CIELO_QUERY_URL) out.push('cielo');
  if (!env.EREDE_API_URL) out.push('erede');
  return out;
}

/** The first free port from `from` (8701 for the quick start). */
export async function firstFreePort(from: number, taken: ReadonlySet<number> = new Set()): Promise<number> {
  for (let port = from; port < from + 200; port++) if (!taken.has(port) && (await isPortFree(port))) return port;
  throw new Error(`no free port from ${from} to ${from + 199}`);
}

/** Starts one simulator (built JS under `root/dist`) on `port` (0: any) and waits for its listening line. */
export function startSimulator(
  root: string,
  name: SimulatorName,
  port: number,
  opts: { logFile?: string; args?: string[]; detached?: boolean } = {},
): Promise<RunningSimulator> {
  const entry = join(root, 'dist', 'scripts', 'simulators', 'main.js');
  const child = spawn(process.execPath, [entry, name, '--port', String(port), ...(opts.args ?? [])], {
    stdio: ['ignore', 'pipe', 'pipe'],
    detached: opts.detached ?? false,
  });
  const log = opts.logFile ? createWriteStream(opts.logFile, { flags: 'a' }) : undefined;
  child.stderr?.on('data', (b: Buffer) => log?.write(b));
  return new Promise((resolve, reject) => {
    let seen = '';
    const timer = setTimeout(() => fail(new Error(`the ${name} simulator did not start within 15 s: ${seen.slice(-500)}`)), 15_000);
    const fail = (e: Error) => {
      clearTimeout(timer);
      child.kill('SIGKILL');
      reject(e);
    };
    child.once('exit', (code) => fail(new Error(`the ${name} simulator exited (${code}) before listening: ${seen.slice(-500)}`)));
    child.stdout?.on('data', (b: Buffer) => {
      log?.write(b);
      if (seen.length < 4096) seen += b.toString('utf8');
      const m = /listening on (http:\/\/127\.0\.0\.1:(\d+))/.exec(seen);
      if (!m) return;
      clearTimeout(timer);
      child.removeAllListeners('exit');
      seen = '';
      resolve({
        name,
        url: m[1],
        port: Number(m[2]),
        child,
        stop: () =>
          new Promise<void>((done) => {
            if (child.exitCode !== null || child.signalCode !== null) return done();
            child.once('exit', () => done());
            child.kill('SIGTERM');
          }),
      });
    });
  });
}
