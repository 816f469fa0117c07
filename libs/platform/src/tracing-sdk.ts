import { Attributes, Context, isSpanContextValid, Link, Span, SpanKind, SpanStatusCode, trace, TraceFlags } from '@opentelemetry/api';
import { core, NodeSDK, resources, tracing } from '@opentelemetry/sdk-node';
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
 * (OTEL_TRACES_SAMPLER_ARG, default 0.1), and of every other trace, each process's first span
 * when it failed or took longer than TRACE_KEEP_SLOWER_THAN_MS (default 2000).
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
    textMapPropagator: new OutboundTraceContext(),
    // Traces only. Metrics stay with prom-client (/metrics), and log lines go to stdout: without
    // these, the SDK would start OTLP metric and log exporters too, and every HTTP request, SQL
    // statement and Redis command would also be measured into histograms nobody reads.
    metricReaders: [],
    logRecordProcessors: [],
    spanProcessors: [standard ? batch : new KeepNotable(batch, Number(env.TRACE_KEEP_SLOWER_THAN_MS ?? DEFAULT_KEEP_SLOWER_THAN_MS))],
    instrumentations: [
      new HttpInstrumentation({
        ignoreIncomingRequestHook: (req: IncomingMessage) => UNTRACED_PATHS.test(req.url ?? ''),
        requireParentforOutgoingSpans: true,
        requestHook: withoutQueries,
      }),
      // Statements and commands of a request or job only: the background passes (the outbox relay's
      // polls, BullMQ's own blocking reads and lock renewals) would each be a trace of their own.
      new PgInstrumentation({ enhancedDatabaseReporting: false, requireParentSpan: true }),
      // The command's name only: a job's arguments are its payload.
      new IORedisInstrumentation({ dbStatementSerializer: (command: string) => command, requireParentSpan: true }),
      new UndiciInstrumentation({ requestHook: withoutQueries, requireParentforSpans: true }),
      new PinoInstrumentation({ disableLogSending: true }),
    ],
  });
  sdk.start();
  const stop = () => void sdk.shutdown().catch(() => undefined);
  process.once('beforeExit', stop);
  return sdk;
}

/**
 * W3C trace context going out (the gateway's `traceparent` on its requests to acquirers and
 * listeners), never coming in: an HTTP request's headers come from a merchant or a browser, and
 * its `traceparent` would let a caller pick the trace id or force its requests sampled and
 * exported. A request starts a trace of its own; jobs, events and outbox rows carry theirs, read
 * by withTraceparent (tracing.ts).
 */
export class OutboundTraceContext extends core.W3CTraceContextPropagator {
  override extract(ctx: Context): Context {
    return ctx;
  }
}

const URL_ATTRIBUTES = ['http.target', 'http.url', 'url.full'];

/**
 * No query string is recorded: a portal link's token (`/portal/enter?t=…`) or a secret a merchant
 * put in its listener URL could ride in one. `url.query` is the query itself (no `?`): replaced
 * whatever it holds.
 */
function withoutQueries(span: Span): void {
  const attributes = (span as unknown as { attributes?: Attributes }).attributes ?? {};
  if (attributes['url.query'] !== undefined) span.setAttribute('url.query', '[redacted]');
  for (const key of URL_ATTRIBUTES) {
    const value = attributes[key];
    if (typeof value === 'string' && value.includes('?')) span.setAttribute(key, value.split('?')[0]);
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
 * A trace chosen by ratio at its root (and followed by every process it reaches) is sampled. Of
 * every other trace, each process records only its own first span (the api's request, a worker's
 * job), not exported, so that `KeepNotable` can keep it if it failed or was slow; the spans under
 * it are not recorded at all, which is what keeps an unsampled sale cheap.
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
  ): tracing.SamplingResult {
    const { SamplingDecision } = tracing;
    const parent = trace.getSpanContext(ctx);
    if (parent && isSpanContextValid(parent)) {
      if (sampled(parent.traceFlags)) return { decision: SamplingDecision.RECORD_AND_SAMPLED };
      return { decision: parent.isRemote ? SamplingDecision.RECORD : SamplingDecision.NOT_RECORD };
    }
    const chosen =
      this.ratio.shouldSample(ctx, traceId, name, kind, attributes ?? {}, links).decision === SamplingDecision.RECORD_AND_SAMPLED;
    return { decision: chosen ? SamplingDecision.RECORD_AND_SAMPLED : SamplingDecision.RECORD };
  }

  toString(): string {
    return `RatioKeepingTheRest{${this.share}}`;
  }
}

/** A recorded-only span that is kept: marked sampled, since span processors export only those. */
function kept(span: ReadableSpan): ReadableSpan {
  const sc = span.spanContext();
  return Object.create(span, { spanContext: { value: () => ({ ...sc, traceFlags: sc.traceFlags | TraceFlags.SAMPLED }) } }) as ReadableSpan;
}

/**
 * Exports sampled spans, and of the recorded-only ones (each process's first span of an unsampled
 * trace) those that failed or took `slowMs` or longer; drops the rest.
 */
export class KeepNotable implements SpanProcessor {
  constructor(
    private readonly next: SpanProcessor,
    private readonly slowMs: number,
  ) {}

  onStart(span: tracing.Span, ctx: Context): void {
    this.next.onStart(span, ctx);
  }

  onEnd(span: ReadableSpan): void {
    if (sampled(span.spanContext().traceFlags)) return this.next.onEnd(span);
    const ms = span.duration[0] * 1e3 + span.duration[1] / 1e6;
    if (ms >= this.slowMs || span.status.code === SpanStatusCode.ERROR) this.next.onEnd(kept(span));
  }

  forceFlush(): Promise<void> {
    return this.next.forceFlush();
  }

  shutdown(): Promise<void> {
    return this.next.shutdown();
  }
}
