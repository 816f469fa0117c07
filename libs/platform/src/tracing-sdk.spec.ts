import { context, defaultTextMapGetter, ROOT_CONTEXT, SpanStatusCode, TextMapPropagator, trace, TraceFlags } from '@opentelemetry/api';
import { node, tracing } from '@opentelemetry/sdk-node';
import { KeepNotable, OutboundTraceContext, RatioKeepingTheRest } from './tracing-sdk';
import { withTraceparent } from './tracing';

/** A tracer whose exported spans land in memory, sampled as the gateway samples by default. */
function setup(ratio: number, slowMs = 50) {
  const exported = new tracing.InMemorySpanExporter();
  const provider = new tracing.BasicTracerProvider({
    sampler: new RatioKeepingTheRest(ratio),
    spanProcessors: [new KeepNotable(new tracing.SimpleSpanProcessor(exported), slowMs)],
  });
  return { tracer: provider.getTracer('test'), names: () => exported.getFinishedSpans().map((s) => s.name) };
}

const remote = (flags: TraceFlags) =>
  trace.setSpanContext(context.active(), { traceId: 'a'.repeat(32), spanId: 'b'.repeat(16), traceFlags: flags, isRemote: true });

describe('default sampling: a ratio, and every failed or slow first span of the rest', () => {
  it('a trace outside the ratio: its first span recorded, the spans under it not, nothing exported when quick and fine', () => {
    const { tracer, names } = setup(0);
    const root = tracer.startSpan('request');
    const child = tracer.startSpan('child', {}, trace.setSpan(context.active(), root));
    expect([root.isRecording(), child.isRecording()]).toEqual([true, false]);
    child.end();
    root.end();
    expect(names()).toEqual([]);
  });

  it('a trace outside the ratio whose first span failed: that span is exported, marked sampled', () => {
    const { tracer, names } = setup(0);
    const root = tracer.startSpan('request');
    root.setStatus({ code: SpanStatusCode.ERROR });
    root.end();
    expect(names()).toEqual(['request']);
  });

  it('a trace outside the ratio whose first span took longer than the threshold is exported', () => {
    const { tracer, names } = setup(0, 50);
    tracer.startSpan('slow request', { startTime: Date.now() - 80 }).end();
    tracer.startSpan('quick request').end();
    expect(names()).toEqual(['slow request']);
  });

  it('a trace in the ratio is exported whole', () => {
    const { tracer, names } = setup(1);
    const root = tracer.startSpan('request');
    tracer.startSpan('child', {}, trace.setSpan(context.active(), root)).end();
    root.end();
    expect(names()).toEqual(['child', 'request']);
  });

  it("a remote parent's decision is followed: sampled is exported, unsampled only recorded (and kept if it fails)", () => {
    const { tracer, names } = setup(1);
    tracer.startSpan('job of a sampled request', {}, remote(TraceFlags.SAMPLED)).end();
    const quiet = tracer.startSpan('job of an unsampled request', {}, remote(TraceFlags.NONE));
    expect(quiet.isRecording()).toBe(true);
    quiet.end();
    const failing = tracer.startSpan('failed job of an unsampled request', {}, remote(TraceFlags.NONE));
    failing.setStatus({ code: SpanStatusCode.ERROR });
    failing.end();
    expect(names()).toEqual(['job of a sampled request', 'failed job of an unsampled request']);
  });
});

describe('trace context is trusted only from inside the gateway', () => {
  const traceparent = `00-${'f'.repeat(32)}-${'e'.repeat(16)}-01`;

  it("no inbound carrier is read by the SDK's propagator, an HTTP request's headers included (with or without Host)", () => {
    const propagator: TextMapPropagator = new OutboundTraceContext();
    for (const carrier of [{ traceparent }, { host: 'api.example', traceparent }])
      expect(trace.getSpanContext(propagator.extract(ROOT_CONTEXT, carrier, defaultTextMapGetter))).toBeUndefined();
  });

  it("a job's or an outbox row's traceparent is followed (withTraceparent), a malformed one ignored", () => {
    // A context manager, as the SDK registers one (without it no context is ever active).
    new node.NodeTracerProvider().register();
    expect(withTraceparent(traceparent, () => trace.getSpanContext(context.active())?.traceId)).toBe('f'.repeat(32));
    for (const bad of [`00-${'0'.repeat(32)}-${'e'.repeat(16)}-01`, 'ff-x', `00-${'F'.repeat(32)}-${'e'.repeat(16)}-01`])
      expect(withTraceparent(bad, () => trace.getSpanContext(context.active()))).toBeUndefined();
  });
});
