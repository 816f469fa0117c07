import { Agent, request } from 'node:http';

export interface OpenLoopResult {
  rps: number;
  p50: number;
  p99: number;
  requests: number;
  non2xx: number;
  errors: number;
}

/**
 * A fixed arrival rate, open loop: request i is due at start + i/rate whatever happened to the
 * ones before, and its latency is counted from when it was due (so a stalled server is not
 * flattered by coordinated omission). Sends are batched per timer tick, which keeps the
 * generator's own cost low on a machine it shares with the system under test.
 */
export async function runOpenLoop(
  url: string,
  rate: number,
  durationS: number,
  maxSockets: number,
  body: () => string,
): Promise<OpenLoopResult> {
  const target = new URL(url);
  const agent = new Agent({ keepAlive: true, maxSockets });
  const total = Math.round(rate * durationS);
  const latencies: number[] = [];
  let non2xx = 0;
  let errors = 0;
  let sent = 0;
  const start = performance.now();
  const inflight: Promise<void>[] = [];

  const send = (due: number) =>
    new Promise<void>((resolve) => {
      const payload = body();
      const req = request(
        {
          host: target.hostname,
          port: target.port,
          path: target.pathname,
          method: 'POST',
          agent,
          headers: { 'content-type': 'application/json', 'content-length': Buffer.byteLength(payload) },
        },
        (res) => {
          res.on('data', () => undefined);
          res.on('end', () => {
            if (res.statusCode! < 200 || res.statusCode! >= 300) non2xx++;
            latencies.push(performance.now() - due);
            resolve();
          });
        },
      );
      req.on('error', () => {
        errors++;
        resolve();
      });
      req.end(payload);
    });

  while (sent < total) {
    const now = performance.now();
    while (sent < total && start + (sent * 1000) / rate <= now) {
      inflight.push(send(start + (sent * 1000) / rate));
      sent++;
    }
    await new Promise((r) => setTimeout(r, 1));
  }
  await Promise.all(inflight);
  agent.destroy();
  const elapsedS = (performance.now() - start) / 1000;
  latencies.sort((a, b) => a - b);
  const q = (p: number) => Math.round(latencies[Math.min(latencies.length - 1, Math.floor(p * latencies.length))] * 10) / 10;
  return { rps: latencies.length / elapsedS, p50: q(0.5), p99: q(0.99), requests: latencies.length, non2xx, errors };
}
