import { createServer, IncomingMessage, Server, ServerResponse } from 'node:http';
import { AddressInfo } from 'node:net';

// eslint-disable-next-line @typescript-eslint/no-explicit-any
type Json = Record<string, any>;

export interface Received {
  path: string;
  transactionId: string | null;
  query: URLSearchParams;
  headers: IncomingMessage['headers'];
  body: string;
  json: Json;
}

export type Behaviour = (req: Received, nth: number) => { status: number; headers?: Record<string, string>; delayMs?: number };

/** A real HTTP listener: records every request and answers as the test says, per path. */
export class Listener {
  readonly received: Received[] = [];
  connections = 0;
  /** Requests waiting for their answer now, and the most there were at once. */
  open = 0;
  maxOpen = 0;
  private readonly behaviours = new Map<string, Behaviour>();
  private server?: Server;

  constructor(private readonly host = '127.0.0.1') {}

  async start(port = 0): Promise<this> {
    this.server = createServer((req, res) => this.handle(req, res));
    this.server.on('connection', () => this.connections++);
    await new Promise<void>((resolve) => this.server!.listen(port, this.host, resolve));
    return this;
  }

  get port(): number {
    return (this.server!.address() as AddressInfo).port;
  }

  url(path: string, query = ''): string {
    return `http://${this.host}:${this.port}${path}${query}`;
  }

  on(path: string, b: Behaviour): void {
    this.behaviours.set(path, b);
  }

  at(path: string): Received[] {
    return this.received.filter((r) => r.path === path);
  }

  /**
   * Waits until exactly `count` requests have come to `path` after its first `skip`, and answers
   * their TransactionIDs (lower-cased) in the order they came.
   */
  async transactionsAfter(path: string, skip: number, count: number, timeoutMs = 30_000): Promise<(string | undefined)[]> {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const got = this.at(path).slice(skip);
      if (got.length === count || Date.now() > deadline) {
        if (got.length !== count)
          throw new Error(
            `${path}: ${got.length} requests after the first ${skip}, expected ${count}: ${got.map((r) => r.transactionId).join(', ')}`,
          );
        return got.map((r) => r.transactionId?.toLowerCase());
      }
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
  }

  async stop(): Promise<void> {
    this.server?.closeAllConnections();
    await new Promise<void>((resolve) => (this.server ? this.server.close(() => resolve()) : resolve()));
  }

  private handle(req: IncomingMessage, res: ServerResponse): void {
    this.maxOpen = Math.max(this.maxOpen, ++this.open);
    res.on('close', () => this.open--);
    const chunks: Buffer[] = [];
    req.on('data', (c) => chunks.push(c));
    req.on('end', () => {
      const url = new URL(req.url ?? '/', 'http://x');
      const body = Buffer.concat(chunks).toString('utf8');
      let json: Json = {};
      try {
        json = JSON.parse(body);
      } catch {
        // recorded as is
      }
      const r: Received = {
        path: url.pathname,
        transactionId: url.searchParams.get('TransactionID'),
        query: url.searchParams,
        headers: req.headers,
        body,
        json,
      };
      this.received.push(r);
      const nth = this.at(r.path).length;
      const answer = (this.behaviours.get(r.path) ?? ((): ReturnType<Behaviour> => ({ status: 200 })))(r, nth);
      setTimeout(() => {
        res.writeHead(answer.status, { 'content-type': 'text/plain', ...answer.headers });
        res.end(`answer ${answer.status}`);
      }, answer.delayMs ?? 0);
    });
  }
}
