import { Attributes, Context, isSpanContextValid, Link, Span, SpanKind, SpanStatusCode, trace, TraceFlags } from '@opentelemetry/api';
import { NodeSDK, resources, tracing } from '@opentelemetry/sdk-node';
import { OTLPTraceExporter } from '@opentelemetry/exporter-trace-otlp-http';
import { HttpInstrumentation } from '@opentelemetry/instrumentation-http';
import { IORedisInstrumentation } from '@opentelemetry/instrumentation-ioredis';
import { PgInstrumentation } from '@opentelemetry/instrumentation-pg';
import { PinoInstrumentation } from '@opentelemetry/instrumentation-pino';
import { UndiciInstrumentation } from '@opentelemetry/instrumentation-undici';
import type { IncomingMessage } from 'node:http';
import { hostname } from 'node:os';

type ReadableSpan = tracing.ReadableSpan;
type SpanProcessor = tracing.SpanProcessor;

const UNTRACED_PATHS = /^\/(health|metrics)(\?|$)/;
const DEFAULT_RATIO = 0.1;
const DEFAULT_KEEP_SLOWER_THAN_MS = 2000;

/**
 * The SDK: OTLP/HTTP export (the standard OTEL_EXPORTER_OTLP_* variables), W3C trace context,
 * and the instrumentations of what the apps talk through. With OTEL_TRACES_SAMPLER set, that
 * sampler decides, as the specification says. Without it, a ratio of traces is kept
 * (OTEL_TRACES_SAMPLER_ARG, default 0.1), and so is every other trace's part that failed or
 * took longer than TRACE_KEEP_SLOWER_THAN_MS (default 2000) in this process.
 */
export function startSdk(service: string, env: NodeJS.ProcessEnv = process.env): NodeSDK {
  const standard = env.OTEL_TRACES_SAMPLER !== undefined;
  const exporter = new OTLPTraceExporter();
  const batch = new tracing.BatchSpanProcessor(exporter);
  const sdk = new NodeSDK({
    resource: resources.resourceFromAttributes({
      'service.name': service,
      'service.namespace': 'card-gateway',
      'service.instance.id': env.REPLICA_NAME ?? `${hostname()}-${process.pid}`,
    }),
    ...(standard ? {} : { sampler: new RatioKeepingTheRest(ratioOf(env.OTEL_TRACES_SAMPLER_ARG)) }),
    spanProcessors: [standard ? batch : new KeepNotable(batch, Number(env.TRACE_KEEP_SLOWER_THAN_MS ?? DEFAULT_KEEP_SLOWER_THAN_MS))],
    instrumentations: [
      new HttpInstrumentation({
        ignoreIncomingRequestHook: (req: IncomingMessage) => UNTRACED_PATHS.test(req.url ?? ''),
        requestHook: withoutQueries,
      }),
      new PgInstrumentation({ enhancedDatabaseReporting: false }),
      // The command's name only: a job's arguments are its payload.
      new IORedisInstrumentation({ dbStatementSerializer: (command: string) => command }),
      new UndiciInstrumentation({ requestHook: withoutQueries }),
      new PinoInstrumentation({ disableLogSending: true }),
    ],
  });
  sdk.start();
  const stop = () => void sdk.shutdown().catch(() => undefined);
  process.once('beforeExit', stop);
  return sdk;
}

const URL_ATTRIBUTES = ['http.target', 'http.url', 'url.full', 'url.query'];

/**
 * No query string is recorded: a portal link's signed token or a listener's own secret could
 * ride in one (a listener URL is the merchant's to choose).
 */
function withoutQueries(span: Span): void {
  const attributes = (span as unknown as { attributes?: Attributes }).attributes ?? {};
  for (const key of URL_ATTRIBUTES) {
    const value = attributes[key];
    if (typeof value === 'string' && value.includes('?')) span.setAttribute(key, key === 'url.query' ? '[redacted]' : value.split('?')[0]);
  }
}

/** W3C trace flags: the sampled bit. */
function sampled(flags: number): boolean {
  return (flags & 1) === 1;
}

function ratioOf(arg: string | undefined): number {
  const n = arg === undefined || arg === '' ? DEFAULT_RATIO : Number(arg);
  return Number.isFinite(n) && n >= 0 && n <= 1 ? n : DEFAULT_RATIO;
}

/**
 * A trace chosen by ratio at its root (and followed by every process it reaches) is sampled; every
 * other trace is still recorded, not exported, so that `KeepNotable` can keep its failures and slow parts.
 */
export class RatioKeepingTheRest implements tracing.Sampler {
  private readonly ratio: tracing.Sampler;
  constructor(private readonly share: number) {
    this.ratio = new tracing.TraceIdRatioBasedSampler(share);
  }

  shouldSample(
    ctx: Context,
    traceId: string,
    name: string,
    kind: SpanKind,
    attributes: tracing.SamplingResult['attributes'],
    links: Link[],
  ) {
    const parent = trace.getSpanContext(ctx);
    const chosen =
      parent && isSpanContextValid(parent)
        ? sampled(parent.traceFlags)
        : this.ratio.shouldSample(ctx, traceId, name, kind, attributes ?? {}, links).decision ===
          tracing.SamplingDecision.RECORD_AND_SAMPLED;
    return { decision: chosen ? tracing.SamplingDecision.RECORD_AND_SAMPLED : tracing.SamplingDecision.RECORD };
  }

  toString(): string {
    return `RatioKeepingTheRest{${this.share}}`;
  }
}

const MAX_HELD_TRACES = 5000;

/** A recorded-only span that is kept: marked sampled, since span processors export only those. */
function kept(span: ReadableSpan): ReadableSpan {
  const sc = span.spanContext();
  return Object.create(span, { spanContext: { value: () => ({ ...sc, traceFlags: sc.traceFlags | TraceFlags.SAMPLED }) } }) as ReadableSpan;
}

/**
 * Exports sampled spans; holds the recorded-only ones of each trace until the trace's part in this
 * process ends (its local root span), then exports them all if one failed or the root took longer
 * than `slowMs`, and drops them otherwise. At most MAX_HELD_TRACES parts are held (oldest dropped).
 */
export class KeepNotable implements SpanProcessor {
  private readonly held = new Map<string, ReadableSpan[]>();

  constructor(
    private readonly next: SpanProcessor,
    private readonly slowMs: number,
  ) {}

  onStart(span: tracing.Span, ctx: Context): void {
    this.next.onStart(span, ctx);
  }

  onEnd(span: ReadableSpan): void {
    const sc = span.spanContext();
    if (sampled(sc.traceFlags)) return this.next.onEnd(span);
    const part = this.held.get(sc.traceId) ?? [];
    part.push(span);
    const localRoot = !span.parentSpanContext || span.parentSpanContext.isRemote;
    if (!localRoot) {
      if (part.length === 1) this.hold(sc.traceId, part);
      return;
    }
    this.held.delete(sc.traceId);
    const ms = span.duration[0] * 1e3 + span.duration[1] / 1e6;
    if (ms >= this.slowMs || part.some((s) => s.status.code === SpanStatusCode.ERROR)) for (const s of part) this.next.onEnd(kept(s));
  }

  private hold(traceId: string, part: ReadableSpan[]): void {
    this.held.set(traceId, part);
    if (this.held.size > MAX_HELD_TRACES) this.held.delete(this.held.keys().next().value!);
  }

  forceFlush(): Promise<void> {
    return this.next.forceFlush();
  }

  shutdown(): Promise<void> {
    this.held.clear();
    return this.next.shutdown();
  }
}
