import { spawn } from 'node:child_process';
import { connect } from 'node:net';

/** An echo server on a loopback port of its own, in another process; prints its port. */
const ECHO = `const s = require('node:net').createServer((c) => c.on('data', (d) => c.write(d)));
s.listen(0, '127.0.0.1', () => process.stdout.write(s.address().port + '\\n'));`;

export interface RoundTrip {
  /** One-byte round trips per second, one at a time, between two processes over loopback TCP. */
  perSecond: number;
  /** CPU (user and system) the calling process spent per round trip, µs. */
  callerCpuUs: number;
}

/**
 * What one message between two processes costs on this host: every hop of a request (client to
 * api, api to Redis or Postgres, Redis to a worker) pays it, so the gateway's figures scale with
 * it from host to host more than with the bare HTTP baseline (a single process). Measured with
 * the gateway idle, after a warm-up.
 */
export async function measureRoundTrip(trips = 5_000, warmup = 500): Promise<RoundTrip> {
  const server = spawn(process.execPath, ['-e', ECHO], { stdio: ['ignore', 'pipe', 'inherit'] });
  try {
    const port = await new Promise<number>((resolve, reject) => {
      server.stdout.once('data', (d: Buffer) => resolve(Number(d.toString().trim())));
      server.once('exit', () => reject(new Error('the echo server exited')));
    });
    const socket = connect(port, '127.0.0.1');
    socket.setNoDelay(true);
    await new Promise<void>((resolve, reject) => socket.once('connect', resolve).once('error', reject));
    return await new Promise<RoundTrip>((resolve) => {
      let n = 0;
      let started = 0n;
      let cpu = process.cpuUsage();
      socket.on('data', () => {
        n++;
        if (n === warmup) {
          started = process.hrtime.bigint();
          cpu = process.cpuUsage();
        }
        if (n < warmup + trips) {
          socket.write('x');
          return;
        }
        const seconds = Number(process.hrtime.bigint() - started) / 1e9;
        const used = process.cpuUsage(cpu);
        socket.destroy();
        resolve({ perSecond: trips / seconds, callerCpuUs: (used.user + used.system) / trips });
      });
      socket.write('x');
    });
  } finally {
    server.kill();
  }
}
