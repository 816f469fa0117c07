/**
 * What every acquirer simulator shares: a plain `node:http` server that answers the acquirer's
 * own API through a handler, plus the simulator's control surface under `/__sim/` (not part of
 * any acquirer's wire):
 *
 * - `POST /__sim/faults` `{ "mode", "match"?, "times"?, "delayMs"? }` queues a fault for the next
 *   `times` (default 1) requests whose `"<METHOD> <path>"` starts with `match` (default: any).
 *   Modes: `slow` (wait `delayMs`, then act and answer), `hang` (act, then never answer: the
 *   socket stays open until the client gives up), `act-then-5xx` (act, then answer 500),
 *   `refuse-5xx` (answer 503 without acting), and any mode a simulator adds (Cielo: `status-0`,
 *   `status-12`).
 * - `DELETE /__sim/faults` drops every queued fault.
 * - `POST /__sim/outage` `{ "ms" }`: for that long the simulator is down: it stops listening (new
 *   connections are refused) and drops the connections it has; then it listens again on the same port.
 * - `GET /__sim/ledger`: what the simulator did (its own books), as JSON.
 * - `DELETE /__sim/ledger`: forgets everything (a test's fresh start).
 */
import { createServer, IncomingMessage, Server, ServerResponse } from 'node:http';

/** `slow`, `hang`, `act-then-5xx`, `refuse-5xx`, or one a simulator adds (Cielo: `status-0`, `status-12`). */
export type FaultMode = string;

export interface Fault {
  mode: FaultMode;
  match?: string;
  times?: number;
  delayMs?: number;
}

/** A request as a simulator's handler sees it: body already read and parsed (undefined when empty or not JSON). */
export interface SimRequest {
  method: string;
  /** Path without the query string. */
  path: string;
  query: URLSearchParams;
  headers: IncomingMessage['headers'];
  rawBody: string;
  body: unknown;
  /** Whether the raw body was present but not valid JSON. */
  malformed: boolean;
  /** The fault this request drew, if any (a handler acts on the modes it adds itself). */
  fault?: Fault;
}

export interface SimAnswer {
  status: number;
  body?: unknown;
  headers?: Record<string, string>;
}

export interface Simulator {
  name: string;
  /** Answers one request of the acquirer's API (acts on it: the ledger changes here). */
  handle(req: SimRequest): SimAnswer | Promise<SimAnswer>;
  ledger(): unknown;
  reset(): void;
}

const MAX_BODY = 1 << 20;

export class FaultQueue {
  private list: (Fault & { match: string; times: number })[] = [];

  add(f: Fault): void {
    this.list.push({ ...f, match: f.match ?? '', times: Math.max(1, f.times ?? 1) });
  }

  clear(): void {
    this.list = [];
  }

  /** The first queued fault matching `"<METHOD> <path>"`, consumed once. */
  take(method: string, path: string): Fault | undefined {
    const line = `${method} ${path}`;
    const i = this.list.findIndex((f) => line.startsWith(f.match));
    if (i < 0) return undefined;
    const f = this.list[i];
    f.times -= 1;
    if (f.times <= 0) this.list.splice(i, 1);
    return { mode: f.mode, match: f.match, delayMs: f.delayMs };
  }
}

/** Starts `sim` on 127.0.0.1:`port` (0 = any free port); resolves with the server and its port. */
export async function serveSimulator(sim: Simulator, port: number, host = '127.0.0.1'): Promise<{ server: Server; port: number }> {
  const { server } = new SimulatorHost(sim, host);
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, () => resolve());
  });
  const address = server.address();
  return { server, port: typeof address === 'object' && address ? address.port : port };
}

/** The HTTP server of one simulator: its API through the simulator's handler, with the queued faults and outages applied. */
class SimulatorHost {
  readonly server: Server;
  private readonly faults = new FaultQueue();
  private outageUntil = 0;

  constructor(
    private readonly sim: Simulator,
    private readonly host: string,
  ) {
    this.server = createServer((req, res) => {
      if (Date.now() < this.outageUntil) {
        req.socket.destroy();
        return;
      }
      void readBody(req)
        .then((raw) => this.route(req, res, raw))
        .catch(() => answer(res, { status: 400, body: [{ Code: 0, Message: 'Unreadable request' }] }));
    });
    // Clients of a real acquirer keep connections alive; so do the connectors.
    this.server.keepAliveTimeout = 65_000;
  }

  private async route(req: IncomingMessage, res: ServerResponse, rawBody: string): Promise<void> {
    const url = new URL(req.url ?? '/', 'http://simulator');
    const method = (req.method ?? 'GET').toUpperCase();
    const path = url.pathname;
    const { body, malformed } = parseJson(rawBody);
    if (path.startsWith('/__sim/')) return answer(res, this.control(method, path, body));
    const fault = this.faults.take(method, path);
    if (fault?.mode === 'refuse-5xx') return answer(res, { status: 503, body: { message: 'Service Unavailable' } });
    if (fault?.mode === 'slow') await sleep(fault.delayMs ?? 2_000);
    let out: SimAnswer;
    try {
      out = await this.sim.handle({ method, path, query: url.searchParams, headers: req.headers, rawBody, body, malformed, fault });
    } catch (e) {
      out = { status: 500, body: { message: `simulator error: ${(e as Error).message}` } };
    }
    if (fault?.mode === 'hang') return; // acted; the answer never comes
    if (fault?.mode === 'act-then-5xx') return answer(res, { status: 500, body: { message: 'Internal Server Error' } });
    answer(res, out);
  }

  private control(method: string, path: string, body: unknown): SimAnswer {
    if (path === '/__sim/faults' && method === 'POST') {
      const list = Array.isArray(body) ? body : [body];
      for (const f of list as Fault[]) {
        if (!f || typeof f.mode !== 'string') return { status: 400, body: { message: 'mode is required' } };
        this.faults.add(f);
      }
      return { status: 204 };
    }
    if (path === '/__sim/faults' && method === 'DELETE') {
      this.faults.clear();
      return { status: 204 };
    }
    if (path === '/__sim/outage' && method === 'POST') {
      this.outage(Number((body as { ms?: number })?.ms ?? 30_000));
      return { status: 204 };
    }
    if (path === '/__sim/ledger' && method === 'GET') return { status: 200, body: this.sim.ledger() };
    if (path === '/__sim/ledger' && method === 'DELETE') {
      this.sim.reset();
      this.faults.clear();
      return { status: 204 };
    }
    return { status: 404, body: { message: 'unknown control path' } };
  }

  /** Down for `ms`: after the control answer is out, stop listening (connections refused) and drop the open ones. */
  private outage(ms: number): void {
    const server = this.server;
    this.outageUntil = Date.now() + ms;
    setTimeout(() => {
      const port = (server.address() as { port: number }).port;
      server.close();
      server.closeAllConnections();
      setTimeout(() => server.listen(port, this.host), ms);
    }, 20).unref();
  }
}

function readBody(req: IncomingMessage): Promise<string> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    req.on('data', (c: Buffer) => {
      size += c.length;
      if (size > MAX_BODY) reject(new Error('body too large'));
      else chunks.push(c);
    });
    req.on('end', () => resolve(Buffer.concat(chunks).toString('utf8')));
    req.on('error', reject);
  });
}

function parseJson(raw: string): { body: unknown; malformed: boolean } {
  if (raw.trim() === '') return { body: undefined, malformed: false };
  try {
    return { body: JSON.parse(raw), malformed: false };
  } catch {
    return { body: undefined, malformed: true };
  }
}

function answer(res: ServerResponse, out: SimAnswer): void {
  const text = out.body === undefined ? '' : JSON.stringify(out.body);
  res.writeHead(out.status, {
    ...(text ? { 'Content-Type': 'application/json; charset=utf-8' } : {}),
    'Content-Length': Buffer.byteLength(text),
    ...out.headers,
  });
  res.end(text);
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
