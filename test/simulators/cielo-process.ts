/** Starts the built Cielo simulator as its own process (`npm run build` first) and stops it. */
import { ChildProcess, spawn } from 'node:child_process';
import { join } from 'node:path';

export const MERCHANT_ID = '5e6b7c1d-0a2f-4e8b-9c3d-1f2a3b4c5d6e';
export const MERCHANT_KEY = 'SIMULATORKEY0123456789ABCDEFGHIJKLMNOPQR';
export const OTHER_MERCHANT_ID = '0f0e0d0c-0b0a-4908-8706-050403020100';

export interface RunningSimulator {
  url: string;
  stop(): Promise<void>;
}

const MAIN = join(__dirname, '..', '..', 'dist', 'scripts', 'simulators', 'main.js');

/** Resolves once the simulator printed its `… listening on http://127.0.0.1:<port>` line. */
export function startCieloSimulator(extraArgs: string[] = []): Promise<RunningSimulator> {
  const child = spawn(process.execPath, [MAIN, 'cielo', '--port', '0', ...extraArgs], { stdio: ['ignore', 'pipe', 'pipe'] });
  let stderr = '';
  child.stderr.on('data', (c: Buffer) => (stderr += c.toString()));
  return new Promise((resolve, reject) => {
    let out = '';
    const onData = (c: Buffer) => {
      out += c.toString();
      const m = /listening on (http:\/\/127\.0\.0\.1:\d+)/.exec(out);
      if (!m) return;
      child.stdout.off('data', onData);
      resolve({ url: m[1], stop: () => stop(child) });
    };
    child.stdout.on('data', onData);
    child.once('exit', (code) => reject(new Error(`simulator exited (${code}) before listening; did you run npm run build? ${stderr}`)));
  });
}

function stop(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null) return Promise.resolve();
  return new Promise((resolve) => {
    child.once('exit', () => resolve());
    child.kill('SIGTERM');
  });
}
