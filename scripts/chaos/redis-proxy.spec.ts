import { once } from 'node:events';
import { connect, createServer, Server, Socket } from 'node:net';
import { DelayProxy } from './redis-proxy';

/** The proxy in front of a plain echo server (it forwards bytes; Redis's protocol is not its concern). */
describe('the delay proxy', () => {
  let echo: Server;
  let proxy: DelayProxy;
  const upstream = new Set<Socket>();

  beforeAll(async () => {
    echo = createServer((s) => {
      upstream.add(s);
      s.on('close', () => upstream.delete(s));
      s.pipe(s);
    });
    echo.listen(0, '127.0.0.1');
    await once(echo, 'listening');
    proxy = await DelayProxy.start((echo.address() as { port: number }).port);
  });

  afterAll(async () => {
    await proxy.close();
    echo.close();
  });

  async function client(): Promise<{ socket: Socket; received: () => string }> {
    const socket = connect(proxy.port, '127.0.0.1');
    await once(socket, 'connect');
    let got = '';
    socket.on('data', (d: Buffer) => (got += d.toString()));
    return { socket, received: () => got };
  }

  const until = async (cond: () => boolean, ms = 3_000) => {
    const deadline = Date.now() + ms;
    while (!cond() && Date.now() < deadline) await new Promise((r) => setTimeout(r, 5));
    return cond();
  };

  it('passes bytes straight through without a delay', async () => {
    const { socket, received } = await client();
    const started = Date.now();
    socket.write('ping');
    expect(await until(() => received() === 'ping')).toBe(true);
    expect(Date.now() - started).toBeLessThan(100);
    socket.destroy();
  });

  it('holds each way for the delay, and keeps the order of many writes', async () => {
    proxy.setDelay(100);
    const { socket, received } = await client();
    const started = Date.now();
    const sent = Array.from({ length: 50 }, (_, i) => `<${i}>`);
    for (const [i, chunk] of sent.entries()) {
      socket.write(chunk);
      if (i % 10 === 0) await new Promise((r) => setTimeout(r, 3));
    }
    expect(await until(() => received().length === sent.join('').length)).toBe(true);
    expect(Date.now() - started).toBeGreaterThanOrEqual(190);
    expect(received()).toBe(sent.join(''));
    proxy.setDelay(0);
    socket.destroy();
  });

  it('closes the client when the server side goes away, as a restart does', async () => {
    const before = new Set(upstream);
    const { socket } = await client();
    expect(await until(() => [...upstream].some((s) => !before.has(s)))).toBe(true);
    const closed = once(socket, 'close');
    for (const s of upstream) if (!before.has(s)) s.destroy();
    await closed;
  });
});
