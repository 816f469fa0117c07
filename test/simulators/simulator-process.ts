/** Starts `node dist/scripts/simulators/main.js <name> --port 0` and reads its port off the first line. */
import { ChildProcess, spawn } from 'node:child_process';
import { join } from 'node:path';

export interface RunningSimulator {
  url: string;
  child: ChildProcess;
  stop(): Promise<void>;
}

export async function startSimulator(name: string, extra: string[] = []): Promise<RunningSimulator> {
  const main = join(__dirname, '..', '..', 'dist', 'scripts', 'simulators', 'main.js');
  const child = spawn(process.execPath, [main, name, '--port', '0', ...extra], { stdio: ['ignore', 'pipe', 'pipe'] });
  const url = await new Promise<string>((resolve, reject) => {
    let out = '';
    let err = '';
    const timer = setTimeout(() => reject(new Error(`simulator did not start: ${err}`)), 10_000);
    child.stderr.on('data', (c: Buffer) => (err += c.toString()));
    child.stdout.on('data', (c: Buffer) => {
      out += c.toString();
      const m = /listening on (http:\/\/127\.0\.0\.1:\d+)/.exec(out);
      if (m) {
        clearTimeout(timer);
        resolve(m[1]);
      }
    });
    child.once('exit', (code) => reject(new Error(`simulator exited (${code}): ${err}`)));
  });
  return {
    url,
    child,
    stop: () =>
      new Promise<void>((resolve) => {
        if (child.exitCode !== null) return resolve();
        child.once('exit', () => resolve());
        child.kill('SIGTERM');
      }),
  };
}

export interface LedgerSale {
  tid: string;
  pv: string;
  reference: string;
  nsu: string;
  amount: number;
  capture: boolean;
  status: string;
  capturedAmount: number;
  refundedAmount: number;
  maskedCard: string;
  operations: { kind: string; amount: number; at: string; refundId?: string }[];
}

export async function ledger(url: string): Promise<LedgerSale[]> {
  const res = await fetch(`${url}/__sim/ledger`);
  return ((await res.json()) as { sales: LedgerSale[] }).sales;
}
