import { MessageHandler } from '@nestjs/microservices';
import { randomUUID } from 'node:crypto';
import { lastValueFrom } from 'rxjs';
import { BullMqClient, BullMqServer, RemoteError, ReplyTimeoutError, TransportUnavailableError, withJobId } from '@app/messaging';
import { currentCorrelationId, runWithCorrelationId } from '@app/platform';
import { testRedisTarget } from '../support/redis';
import { eventually } from '../support/stack';

jest.setTimeout(60_000);

/** Wraps a plain async function as a Nest message handler. */
// eslint-disable-next-line @typescript-eslint/no-explicit-any
function handler(fn: (data: any) => Promise<unknown>): MessageHandler {
  return ((data: unknown) => fn(data)) as MessageHandler;
}

/**
 * The transport against real Redis, caller and worker in this process: request/reply, domain
 * errors, timeouts, durable events with retry and dedup, and the correlation id.
 */
describe('BullMQ transport (real Redis)', () => {
  const redis = testRedisTarget();
  const prefix = `${process.env.QUEUE_PREFIX}tr${randomUUID().slice(0, 6)}`;
  let server: BullMqServer;
  let client: BullMqClient;
  const seen: { pattern: string; data: unknown; correlationId?: string }[] = [];
  let flaky = 0;

  beforeAll(async () => {
    server = new BullMqServer({
      connection: redis,
      prefix,
      requiredPatterns: ['echo', 'fail', 'slow'],
      defaultConcurrency: 8,
      eventRetry: { backoffMs: 100 },
    });
    server.addHandler(
      'echo',
      handler(async (d) => (seen.push({ pattern: 'echo', data: d, correlationId: currentCorrelationId() }), { echoed: d })),
    );
    server.addHandler(
      'fail',
      // eslint-disable-next-line @typescript-eslint/prefer-promise-reject-errors -- a domain failure reaches the transport as a plain RemoteErrorPayload, which is what this handler stands for
      handler(async () => Promise.reject({ kind: 'not_found', code: '040', message: 'Token not found.', parameter: 'token' })),
    );
    server.addHandler(
      'crash',
      handler(async () => Promise.reject(new Error('db exploded with secret details'))),
    );
    server.addHandler(
      'slow',
      handler(async (d) => new Promise((r) => setTimeout(() => r(d), 1500))),
    );
    server.addHandler(
      'evt',
      handler(async (d) => {
        seen.push({ pattern: 'evt', data: d, correlationId: currentCorrelationId() });
        if (d.flaky && flaky++ === 0) throw new Error('first attempt fails');
      }),
      true,
    );
    // listen() reports every failure through its callback; its own promise only says it returned.
    await new Promise<void>((resolve, reject) => {
      void server.listen((err?: unknown) =>
        err ? reject(err instanceof Error ? err : new Error('listen failed', { cause: err })) : resolve(),
      );
    });
    client = new BullMqClient({ connection: redis, prefix, replyTimeoutMs: 800 });
    await client.connect();
  });

  afterAll(async () => {
    await client?.close();
    await server?.close();
  });

  it('answers many concurrent requests, each with its own reply', async () => {
    const replies = await Promise.all(Array.from({ length: 100 }, (_, i) => lastValueFrom(client.send('echo', { i }))));
    expect(replies).toEqual(Array.from({ length: 100 }, (_, i) => ({ echoed: { i } })));
  });

  it('carries the caller correlation id into the handler', async () => {
    await runWithCorrelationId('corr-abc', () => lastValueFrom(client.send('echo', { tag: 'corr' })));
    expect(seen.find((s) => (s.data as { tag?: string }).tag === 'corr')?.correlationId).toBe('corr-abc');
  });

  it('turns a structured handler failure into a RemoteError carrying it', async () => {
    await expect(lastValueFrom(client.send('fail', {}))).rejects.toEqual(
      new RemoteError({ kind: 'not_found', code: '040', message: 'Token not found.', parameter: 'token' }),
    );
    const err = await lastValueFrom(client.send('fail', {})).catch((e) => e);
    expect(err.payload.code).toBe('040');
  });

  it('hides an unexpected handler error behind a generic unavailable answer', async () => {
    const err = await lastValueFrom(client.send('crash', {})).catch((e) => e);
    expect(err).toBeInstanceOf(RemoteError);
    expect(err.payload).toMatchObject({ kind: 'unavailable', code: '503' });
    expect(JSON.stringify(err.payload)).not.toContain('secret');
  });

  it('surfaces a reply timeout as ReplyTimeoutError and ignores the late reply', async () => {
    const err = await lastValueFrom(client.send('slow', { late: true })).catch((e) => e);
    expect(err).toBeInstanceOf(ReplyTimeoutError);
    // The late reply arrives after the timeout and must not crash or answer anything.
    await new Promise((r) => setTimeout(r, 1200));
    expect(await lastValueFrom(client.send('echo', { after: 'late' }))).toEqual({ echoed: { after: 'late' } });
  });

  it('retries a failing event handler until it succeeds', async () => {
    await lastValueFrom(client.emit('evt', { flaky: true, id: 'f1' }));
    await eventually(() => expect(seen.filter((s) => s.pattern === 'evt' && (s.data as { id?: string }).id === 'f1')).toHaveLength(2), {
      timeoutMs: 10_000,
    });
  });

  it('runs an event published twice with one deterministic id once (within the dedup window)', async () => {
    const id = `outbox:${randomUUID()}`;
    await lastValueFrom(client.emit('evt', withJobId({ id: 'dup' }, id)));
    await lastValueFrom(client.emit('evt', withJobId({ id: 'dup' }, id)));
    await new Promise((r) => setTimeout(r, 1000));
    expect(seen.filter((s) => (s.data as { id?: string }).id === 'dup')).toHaveLength(1);
  });

  it('fails fast with TransportUnavailableError when Redis cannot be reached', async () => {
    const offline = new BullMqClient({ connection: { url: 'redis://127.0.0.1:1' }, prefix, replyTimeoutMs: 5000 });
    const started = Date.now();
    const err = await lastValueFrom(offline.send('echo', {})).catch((e) => e);
    expect(err).toBeDefined();
    expect(Date.now() - started).toBeLessThan(4000);
    await offline.close();
    expect(err instanceof TransportUnavailableError || /ECONNREFUSED|connect/i.test(String(err?.message))).toBe(true);
  });

  it('refuses to listen when a required pattern has no handler, naming it', async () => {
    const incomplete = new BullMqServer({ connection: redis, prefix, requiredPatterns: ['echo', 'token.add'] });
    incomplete.addHandler(
      'echo',
      handler(async () => 1),
    );
    const err = await new Promise<unknown>((resolve) => void incomplete.listen((e?: unknown) => resolve(e)));
    expect(String(err)).toContain('no handler for pattern(s): token.add');
    await incomplete.close();
  });
});
