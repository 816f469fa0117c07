import { Attributes, context, isSpanContextValid, Span, SpanKind, SpanStatusCode, trace, TraceFlags } from '@opentelemetry/api';

/**
 * Traces (OpenTelemetry). Off unless an OTLP endpoint is configured: then the SDK is loaded,
 * before the app's other modules, by the app's own `tracing.ts` (the first import of its
 * `main.ts`), so Fastify's HTTP server, pg, ioredis, undici and pino are instrumented. Everything
 * else here is the OpenTelemetry API, which does nothing while no SDK is registered: a gateway
 * without tracing pays a function call per span, and carries no trace context in its jobs.
 */
export function tracingEnabled(env: NodeJS.ProcessEnv = process.env): boolean {
  if (env.OTEL_SDK_DISABLED === 'true' || env.OTEL_TRACES_EXPORTER === 'none') return false;
  return Boolean(env.OTEL_EXPORTER_OTLP_ENDPOINT || env.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT);
}

/** Starts the SDK for `service` (api, tokenizer, …) when tracing is enabled. Call before anything else is imported. */
export function startTracing(service: string): void {
  if (!tracingEnabled()) return;
  // Loaded only when on: the SDK and its instrumentations are not even read otherwise.
  // eslint-disable-next-line @typescript-eslint/no-require-imports -- a conditional, synchronous load is the point
  (require('./tracing-sdk') as typeof import('./tracing-sdk')).startSdk(service);
}

const tracer = () => trace.getTracer('card-gateway');

/** The W3C `traceparent` of the work in progress, to carry across a queue or the outbox. */
export function currentTraceparent(): string | undefined {
  const sc = trace.getSpan(context.active())?.spanContext();
  if (!sc || !isSpanContextValid(sc)) return undefined;
  return `00-${sc.traceId}-${sc.spanId}-${(sc.traceFlags & 0xff).toString(16).padStart(2, '0')}`;
}

const TRACEPARENT = /^00-([0-9a-f]{32})-([0-9a-f]{16})-([0-9a-f]{2})$/;

/** Runs `fn` in the trace a `traceparent` names (from a job or an outbox row), or as it is when there is none. */
export function withTraceparent<T>(traceparent: string | undefined, fn: () => T): T {
  // Parsed here, not by the global propagator: that one ignores every inbound HTTP header (tracing-sdk.ts).
  const m = traceparent ? TRACEPARENT.exec(traceparent) : null;
  const sc = m ? { traceId: m[1], spanId: m[2], traceFlags: parseInt(m[3], 16), isRemote: true } : undefined;
  if (!sc || !isSpanContextValid(sc)) return fn();
  return context.with(trace.setSpanContext(context.active(), sc), fn);
}

/** The trace id of the work in progress, when its trace is sampled (exported whole). */
export function currentTraceId(): string | undefined {
  const sc = trace.getSpan(context.active())?.spanContext();
  return sc && (sc.traceFlags & TraceFlags.SAMPLED) === 1 ? sc.traceId : undefined;
}

/** Names the work in progress (`gateway.transaction_id`, the acquirer's code…) on its span. Never card data. */
export function traceAttributes(attributes: Attributes): void {
  trace.getSpan(context.active())?.setAttributes(attributes);
}

export interface SpanOptions {
  kind?: SpanKind;
  attributes?: Attributes;
  startTime?: number;
  /** Errors that are flow control, not failure (BullMQ's DelayedError): the span is not marked failed. */
  notFailure?: (e: unknown) => boolean;
}

/**
 * `fn` inside a span of its own (a child of the work in progress). A thrown error marks it failed
 * with the error's class only: messages can quote what was sent.
 */
export async function inSpan<T>(name: string, opts: SpanOptions, fn: (span: Span) => Promise<T>): Promise<T> {
  return tracer().startActiveSpan(
    name,
    { kind: opts.kind ?? SpanKind.INTERNAL, attributes: opts.attributes, startTime: opts.startTime },
    async (span) => {
      try {
        return await fn(span);
      } catch (e) {
        if (!opts.notFailure?.(e)) span.setStatus({ code: SpanStatusCode.ERROR, message: e instanceof Error ? e.name : 'error' });
        throw e;
      } finally {
        span.end();
      }
    },
  );
}

/**
 * Names the request's HTTP server span by its route (`POST /v1/receiver`) and sets `http.route`:
 * the HTTP instrumentation that makes the span cannot know Fastify's routes.
 */
export function nameRequestSpan(method: string, route: string): void {
  const span = trace.getSpan(context.active());
  if (!span) return;
  span.updateName(`${method} ${route}`);
  span.setAttribute('http.route', route);
}

/** Marks the work in progress failed, by the error's class only. */
export function failSpan(e: unknown): void {
  trace.getSpan(context.active())?.setStatus({ code: SpanStatusCode.ERROR, message: e instanceof Error ? e.name : 'error' });
}

/** A span that already happened (a job's wait in its queue), recorded after the fact under the work in progress. */
export function pastSpan(name: string, startTime: number, endTime: number, attributes: Attributes): void {
  if (!trace.getSpan(context.active())) return;
  tracer().startSpan(name, { kind: SpanKind.INTERNAL, startTime, attributes }).end(endTime);
}

export { SpanKind };
export type { Attributes };
