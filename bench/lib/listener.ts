import { once } from 'node:events';
import { Agent, createServer, request, Server } from 'node:http';
import { AddressInfo } from 'node:net';

/** What one measured run of webhooks saw arrive at a listener. */
export interface Arrivals {
  /** Per transaction, its first arrival's delay after the event was enqueued (ms). */
  latencies: Map<string, number>;
  duplicates: number;
  lastArrivalAt: number;
  /** The most requests of this run the listener held open at once (the sender's concurrency). */
  maxOpen: number;
  /** Resolves once `expected` distinct transactions have arrived. */
  complete: Promise<void>;
}

/**
 * A merchant's webhook listener in the bench process (keep-alive, as node:http is by default):
 * answers 200 after `delayMs`, and tells runs apart by the `run` query parameter the bench puts
 * into urlReturn (the notifier keeps the URL's own query and adds TransactionID).
 */
export class WebhookListener {
  private readonly runs = new Map<string, Arrivals & { open: number; expected: number; resolve: () => void }>();

  private constructor(
    private readonly server: Server,
    readonly url: string,
  ) {}

  static async start(delayMs: number): Promise<WebhookListener> {
    let self: WebhookListener | undefined;
    const server = createServer((req, res) => {
      const run = self!.opened(new URL(req.url ?? '/', 'http://x').searchParams);
      req.resume();
      req.on('end', () => {
        const answer = () => {
          if (run) run.open--;
          res.writeHead(200, { 'content-type': 'text/plain', 'content-length': 2 }).end('ok');
        };
        if (delayMs > 0) setTimeout(answer, delayMs);
        else answer();
      });
    });
    server.listen(0, '127.0.0.1');
    await once(server, 'listening');
    self = new WebhookListener(server, `http://127.0.0.1:${(server.address() as AddressInfo).port}/hook`);
    return self;
  }

  track(run: string, expected: number): Arrivals {
    let resolve!: () => void;
    const complete = new Promise<void>((r) => (resolve = r));
    const arrivals = {
      latencies: new Map<string, number>(),
      duplicates: 0,
      lastArrivalAt: 0,
      maxOpen: 0,
      open: 0,
      complete,
      expected,
      resolve,
    };
    this.runs.set(run, arrivals);
    return arrivals;
  }

  /** Counts a request of a tracked run on arrival (headers in); returns its run to count it closed. */
  private opened(q: URLSearchParams) {
    const run = this.runs.get(q.get('run') ?? '');
    const id = q.get('TransactionID');
    if (!run || !id) return undefined; // the bare client's requests, or a stray
    run.maxOpen = Math.max(run.maxOpen, ++run.open);
    const now = Date.now();
    // At-least-once delivery: a repeat is counted apart, never as a second delivery.
    if (run.latencies.has(id)) {
      run.duplicates++;
      return run;
    }
    run.latencies.set(id, now - Number(q.get('sent')));
    run.lastArrivalAt = now;
    if (run.latencies.size === run.expected) run.resolve();
    return run;
  }

  async close(): Promise<void> {
    this.server.closeAllConnections();
    await new Promise((r) => this.server.close(r));
  }
}

/**
 * The baseline: a bare keep-alive client in this process POSTing `body` to `url` `total` times,
 * `concurrency` at a time. Returns requests per second.
 */
export async function bareDeliveries(url: string, body: string, total: number, concurrency: number): Promise<number> {
  const agent = new Agent({ keepAlive: true, maxSockets: concurrency });
  const headers = { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) };
  let remaining = total;
  const post = () =>
    new Promise<void>((resolve, reject) => {
      const req = request(url, { method: 'POST', agent, headers }, (res) => {
        res.resume();
        res.on('end', resolve);
      });
      req.on('error', reject);
      req.end(body);
    });
  const start = performance.now();
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      while (remaining-- > 0) await post();
    }),
  );
  const elapsedS = (performance.now() - start) / 1000;
  agent.destroy();
  return total / elapsedS;
}
