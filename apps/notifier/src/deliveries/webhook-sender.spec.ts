import { createServer, IncomingMessage, Server } from 'node:http';
import { AddressInfo } from 'node:net';
import { Webhook } from 'standardwebhooks';
import { parseAllowList } from '@app/webhooks';
import { WebhookSender } from './webhook-sender';

/** One attempt against a real local listener: signing, classification, truncation, the address guard. */
describe('WebhookSender', () => {
  const secret = `whsec_${Buffer.alloc(32, 7).toString('base64')}`;
  const old = `whsec_${Buffer.alloc(32, 9).toString('base64')}`;
  let server: Server;
  let port: number;
  let answer: (
    req: IncomingMessage,
    body: string,
  ) => { status: number; body?: string; headers?: Record<string, string>; delayMs?: number; bodyDelayMs?: number };
  const seen: { headers: IncomingMessage['headers']; body: string; url: string }[] = [];
  const sender = new WebhookSender(parseAllowList('127.0.0.1/32'), 500);

  beforeAll(async () => {
    server = createServer((req, res) => {
      let body = '';
      req.on('data', (c) => (body += c));
      req.on('end', () => {
        seen.push({ headers: req.headers, body, url: req.url ?? '' });
        const a = answer(req, body);
        setTimeout(() => {
          res.writeHead(a.status, a.headers);
          if (!a.bodyDelayMs) return res.end(a.body ?? '');
          res.flushHeaders();
          setTimeout(() => res.end(a.body ?? ''), a.bodyDelayMs);
        }, a.delayMs ?? 0);
      });
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    port = (server.address() as AddressInfo).port;
  });

  afterAll(async () => {
    sender.close();
    server.closeAllConnections();
    await new Promise((r) => server.close(r));
  });

  it('signs the body with Standard Webhooks headers that the library verifies, with both secrets during a rotation', async () => {
    answer = () => ({ status: 204 });
    const body = JSON.stringify({ type: 'transaction.status_changed', data: { status: '8' } });
    const r = await sender.send('3b9f0b3c-1111-4222-8333-444455556666', `http://127.0.0.1:${port}/l?TransactionID=X`, body, {
      current: secret,
      previous: old,
    });
    expect(r).toMatchObject({ httpStatus: 204, errorClass: undefined });
    const got = seen.at(-1)!;
    expect(got.body).toBe(body);
    expect(got.headers['webhook-id']).toBe('3b9f0b3c-1111-4222-8333-444455556666');
    expect(String(got.headers['webhook-signature']).split(' ')).toHaveLength(2);
    for (const s of [secret, old]) expect(new Webhook(s).verify(got.body, got.headers as Record<string, string>)).toEqual(JSON.parse(body));
  });

  it('classifies a non-2xx as http_status, keeps 1 KiB of the answer and reads Retry-After', async () => {
    answer = () => ({ status: 503, body: 'x'.repeat(5000), headers: { 'retry-after': '7' } });
    const r = await sender.send('id-1', `http://127.0.0.1:${port}/`, '{}', { current: secret });
    expect(r).toMatchObject({ httpStatus: 503, errorClass: 'http_status', retryAfterMs: 7000 });
    expect(r.responseBody).toHaveLength(1024);
  });

  it('treats a redirect as a failed attempt and does not follow it', async () => {
    answer = () => ({ status: 302, headers: { location: 'http://127.0.0.1:1/elsewhere' } });
    const before = seen.length;
    expect(await sender.send('id-2', `http://127.0.0.1:${port}/`, '{}', { current: secret })).toMatchObject({
      httpStatus: 302,
      errorClass: 'http_status',
    });
    expect(seen.length).toBe(before + 1);
  });

  it('times out a listener slower than the limit', async () => {
    answer = () => ({ status: 200, delayMs: 1500 });
    expect(await sender.send('id-3', `http://127.0.0.1:${port}/`, '{}', { current: secret })).toMatchObject({ errorClass: 'timeout' });
  });

  it('gives up on a listener whose headers do not come within the first-byte limit, long before the attempt limit', async () => {
    const phased = new WebhookSender(parseAllowList('127.0.0.1/32'), 5_000, { connectMs: 200, firstByteMs: 300 });
    try {
      answer = () => ({ status: 200, delayMs: 1_500 });
      const r = await phased.send('id-9', `http://127.0.0.1:${port}/`, '{}', { current: secret });
      expect(r).toMatchObject({ errorClass: 'timeout', responseBody: 'listener sent no answer within 300 ms' });
      expect(r.durationMs).toBeLessThan(1_000);
      // Headers in time, the body after the first-byte limit but within the attempt's: delivered.
      answer = () => ({ status: 200, body: 'ok', bodyDelayMs: 600 });
      expect(await phased.send('id-10', `http://127.0.0.1:${port}/`, '{}', { current: secret })).toMatchObject({
        httpStatus: 200,
        errorClass: undefined,
        responseBody: 'ok',
      });
    } finally {
      phased.close();
    }
  });

  it('classifies a refused connection and an unknown name', async () => {
    expect(await sender.send('id-4', 'http://127.0.0.1:1/', '{}', { current: secret })).toMatchObject({ errorClass: 'connect' });
    expect(await sender.send('id-5', 'http://no-such-host.invalid/', '{}', { current: secret })).toMatchObject({ errorClass: 'dns' });
  });

  it('refuses forbidden targets: an IP literal, and a name resolving to one (checked at connection time)', async () => {
    const before = seen.length;
    expect(await sender.send('id-6', `http://127.0.0.2:${port}/`, '{}', { current: secret })).toMatchObject({ errorClass: 'ssrf_blocked' });
    expect(await sender.send('id-7', 'http://[::1]:1/', '{}', { current: secret })).toMatchObject({ errorClass: 'ssrf_blocked' });
    const strict = new WebhookSender(parseAllowList(''), 500);
    try {
      expect(await strict.send('id-8', `http://localhost:${port}/`, '{}', { current: secret })).toMatchObject({
        errorClass: 'ssrf_blocked',
      });
    } finally {
      strict.close();
    }
    expect(seen.length).toBe(before);
  });
});
