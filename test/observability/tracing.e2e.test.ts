import { createMerchant, eventually, MerchantCredentials, Stack, startStack } from '../support/stack';
import { receiverOf } from '../support/money';
import { Listener } from '../support/listener';
import { ExportedSpan, OtlpReceiver } from '../support/otlp';
import { CANARY_CODES, SANDBOX_CARDS } from '../fixtures/cards';

jest.setTimeout(240_000);

const SERVER = 2;
const CLIENT = 3;

/**
 * One sale followed across every process by its exported trace (OTLP/HTTP to a receiver in this
 * test): the api's request, the job's wait and work in the tokenizer, the acquirer's call, then
 * settlement and the webhook, whose request carries the trace to the merchant's listener. No span
 * holds card data or a secret, and the apps' log lines name the trace.
 */
describe('a sale traced across every process', () => {
  let stack: Stack;
  let shop: MerchantCredentials;
  let listener: Listener;
  const otlp = new OtlpReceiver();

  beforeAll(async () => {
    await otlp.start();
    listener = await new Listener().start();
    stack = await startStack(
      { OTEL_EXPORTER_OTLP_ENDPOINT: otlp.url, OTEL_TRACES_SAMPLER_ARG: '1', OTEL_BSP_SCHEDULE_DELAY: '100' },
      // The tokenizer logs each job it takes at debug level: a line inside the job's span.
      { withConsole: true, envFor: { notifier: { WEBHOOK_ALLOW_NETWORKS: '127.0.0.1/32' }, tokenizer: { LOG_LEVEL: 'debug' } } },
    );
    shop = await createMerchant('tracing shop');
  });

  afterAll(async () => {
    await stack?.stop();
    await listener?.stop();
    await otlp.stop();
  });

  it('one trace id from the api to the listener, each stage a span under its parent, no card data', async () => {
    const body = {
      order: { reference: `TR-${Date.now()}`, totalAmount: 7_000 },
      payment: {
        acquirer: 26,
        method: 1,
        amount: 7_000,
        currency: '986',
        country: 'BRA',
        numberOfPayments: 1,
        cardHolder: 'TRACE HOLDER',
        cardNumber: SANDBOX_CARDS[1],
        cardSecurityCode: CANARY_CODES[2],
        cardExpirationDate: '203012',
      },
      urlReturn: listener.url('/traced'),
    };
    // A caller's own trace context is not trusted: the gateway starts the trace (and decides its sampling).
    const forged = `00-${'f'.repeat(32)}-${'e'.repeat(16)}-01`;
    const sale = await receiverOf(stack.baseUrl, shop)('sale', body, { traceparent: forged });
    expect(sale.status).toBe(200);
    const id: string = sale.json.transactionId;

    // The webhook's request carries the sale's trace to the listener.
    await eventually(async () => expect(listener.received.filter((r) => r.transactionId === id)).not.toHaveLength(0), {
      timeoutMs: 30_000,
    });
    const hook = listener.received.find((r) => r.transactionId === id)!;
    const [, traceId] = /^00-([0-9a-f]{32})-[0-9a-f]{16}-0[01]$/.exec(String(hook.headers.traceparent)) ?? [];
    expect(traceId).toBeDefined();
    expect(traceId).not.toBe('f'.repeat(32));

    const stages = [
      ['api', 'POST /v1/receiver', SERVER],
      ['tokenizer', 'queue wait card.authorize'],
      ['tokenizer', 'process card.authorize'],
      ['tokenizer', 'acquirer authorize', CLIENT],
      ['tokenizer', 'status change'],
      ['settlement', 'process transaction.captured'],
      ['notifier', 'process transaction.status_changed'],
      ['notifier', 'POST', CLIENT],
    ] as const;
    let spans: ExportedSpan[] = [];
    await eventually(
      async () => {
        spans = otlp.trace(traceId);
        for (const [service, name, kind] of stages)
          expect({
            service,
            name,
            found: spans.some((s) => s.service === service && s.name.startsWith(name) && (kind === undefined || s.kind === kind)),
          }).toEqual({
            service,
            name,
            found: true,
          });
      },
      { timeoutMs: 30_000, intervalMs: 250 },
    );

    // One root (the api's request); every other span's parent is in the trace.
    const ids = new Set(spans.map((s) => s.spanId));
    const roots = spans.filter((s) => !s.parentSpanId || !ids.has(s.parentSpanId));
    expect(roots.map((r) => `${r.service} ${r.name}`)).toEqual(['api POST /v1/receiver']);
    expect(roots[0].attributes['http.route']).toBe('/v1/receiver');
    expect(roots[0].parentSpanId).toBe('');
    const byName = (service: string, name: string) => spans.find((s) => s.service === service && s.name.startsWith(name))!;
    const parentOf = (s: ExportedSpan) => spans.find((p) => p.spanId === s.parentSpanId);
    // The tokenizer's work hangs under the api's request; the acquirer's call under that work.
    expect(parentOf(byName('tokenizer', 'acquirer authorize'))?.service).toBe('tokenizer');
    // Settlement and the webhook hang under the status change that caused them.
    expect(parentOf(byName('settlement', 'process transaction.captured'))?.name).toBe('status change');
    expect(parentOf(byName('notifier', 'process transaction.status_changed'))?.name).toBe('status change');
    expect(byName('tokenizer', 'acquirer authorize').attributes).toMatchObject({
      'gateway.acquirer': 'sandbox',
      'gateway.acquirer.outcome': 'approved',
    });
    // The stages name the transaction.
    for (const [service, name] of [
      ['api', 'POST /v1/receiver'],
      ['tokenizer', 'process card.authorize'],
      ['settlement', 'process transaction.captured'],
      ['notifier', 'process transaction.status_changed'],
    ])
      expect(byName(service, name).attributes['gateway.transaction_id']).toBe(id.toUpperCase());

    // A portal link's token rides in its query string: the span of its request does not keep it.
    const linkToken = `PORTALCANARY${Date.now()}`;
    await fetch(`${stack.consoleUrl}/portal/enter?t=${linkToken}`, { redirect: 'manual' });
    await eventually(async () => expect(otlp.spans.some((s) => s.service === 'console' && s.name.startsWith('GET'))).toBe(true), {
      timeoutMs: 15_000,
    });

    // Nothing exported holds card data, the merchant's key, its webhook secret or a link's token.
    const exported = otlp.raw.join('\n');
    expect(otlp.raw.length).toBeGreaterThan(0);
    for (const secret of [SANDBOX_CARDS[1], shop.merchantKey, shop.webhookSecret, 'TRACE HOLDER', linkToken])
      expect({ secret: secret.slice(0, 4), found: exported.includes(secret) }).toEqual({ secret: secret.slice(0, 4), found: false });
    // A security code is short: looked for as a value of its own, not inside an id or a timestamp.
    const code = new RegExp(`(?<![0-9A-Za-z+/=_-])${CANARY_CODES[2]}(?![0-9A-Za-z+/=_-])`);
    expect(code.test(exported)).toBe(false);

    // Log lines of the traced work carry its trace and span ids.
    for (const app of ['api', 'tokenizer'] as const)
      expect(stack.logOf(app)).toMatch(new RegExp(`"trace_id":"${traceId}","span_id":"[0-9a-f]{16}"`));
  });
});
