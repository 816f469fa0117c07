import { createConnection, createServer, Server, Socket } from 'node:net';

/**
 * A TCP proxy in front of Redis, in the chaos run's own process: every byte each way is held
 * `delayMs` while a delay is on (the network delay fault, without the kernel's tc), and a
 * connection whose Redis side closes (a Redis restart) is closed on the client side too, as a
 * network would. Order within a connection is kept.
 */
export class DelayProxy {
  private delayMs = 0;
  private readonly sockets = new Set<Socket>();

  private constructor(
    private readonly server: Server,
    readonly port: number,
  ) {}

  static async start(upstreamPort: number): Promise<DelayProxy> {
    let self!: DelayProxy;
    const server = createServer((client) => self.connect(client, upstreamPort));
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(0, '127.0.0.1', () => resolve());
    });
    self = new DelayProxy(server, (server.address() as { port: number }).port);
    return self;
  }

  get url(): string {
    return `redis://127.0.0.1:${this.port}`;
  }

  setDelay(ms: number): void {
    this.delayMs = ms;
  }

  async close(): Promise<void> {
    for (const s of this.sockets) s.destroy();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }

  private connect(client: Socket, upstreamPort: number): void {
    const upstream = createConnection({ host: '127.0.0.1', port: upstreamPort });
    for (const s of [client, upstream]) {
      this.sockets.add(s);
      s.setNoDelay(true);
      s.on('error', () => undefined);
      s.on('close', () => {
        this.sockets.delete(s);
        client.destroy();
        upstream.destroy();
      });
    }
    this.pipe(client, upstream);
    this.pipe(upstream, client);
  }

  /** Forwards `from` to `to`: each chunk `delayMs` after it came, and never before the chunk ahead of it. */
  private pipe(from: Socket, to: Socket): void {
    const queue: { at: number; chunk: Buffer }[] = [];
    let timer: NodeJS.Timeout | undefined;
    const flush = () => {
      timer = undefined;
      while (queue.length > 0 && queue[0].at <= Date.now()) {
        const { chunk } = queue.shift()!;
        if (!to.destroyed) to.write(chunk);
      }
      if (queue.length > 0) timer = setTimeout(flush, queue[0].at - Date.now());
    };
    from.on('data', (chunk: Buffer) => {
      if (this.delayMs <= 0 && queue.length === 0) {
        if (!to.destroyed) to.write(chunk);
        return;
      }
      queue.push({ at: Math.max(queue.at(-1)?.at ?? 0, Date.now() + this.delayMs), chunk });
      if (!timer) timer = setTimeout(flush, queue[0].at - Date.now());
    });
    from.on('close', () => clearTimeout(timer));
  }
}
