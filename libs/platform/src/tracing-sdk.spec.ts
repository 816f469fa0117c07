import { context, SpanStatusCode, trace, TraceFlags } from '@opentelemetry/api';
import { tracing } from '@opentelemetry/sdk-node';
import { KeepNotable, RatioKeepingTheRest } from './tracing-sdk';

/** A tracer whose exported spans land in memory, sampled as the gateway samples by default. */
function setup(ratio: number, slowMs = 50) {
  const exported = new tracing.InMemorySpanExporter();
  const provider = new tracing.BasicTracerProvider({
    sampler: new RatioKeepingTheRest(ratio),
    spanProcessors: [new KeepNotable(new tracing.SimpleSpanProcessor(exported), slowMs)],
  });
  return { tracer: provider.getTracer('test'), names: () => exported.getFinishedSpans().map((s) => s.name) };
}

describe('default sampling: a ratio, and every failure or slow part of the rest', () => {
  it('a trace outside the ratio, quick and without failure, is not exported', () => {
    const { tracer, names } = setup(0);
    const root = tracer.startSpan('request');
    tracer.startSpan('child', {}, trace.setSpan(context.active(), root)).end();
    root.end();
    expect(names()).toEqual([]);
  });

  it('a trace outside the ratio with a failed span is exported whole, marked sampled', () => {
    const { tracer, names } = setup(0);
    const root = tracer.startSpan('request');
    const ctx = trace.setSpan(context.active(), root);
    tracer.startSpan('fine', {}, ctx).end();
    const failed = tracer.startSpan('failed', {}, ctx);
    failed.setStatus({ code: SpanStatusCode.ERROR });
    failed.end();
    expect(names()).toEqual([]);
    root.end();
    expect(names()).toEqual(['fine', 'failed', 'request']);
  });

  it('a trace outside the ratio whose root took longer than the threshold is exported', () => {
    const { tracer, names } = setup(0, 50);
    const root = tracer.startSpan('slow request', { startTime: Date.now() - 80 });
    root.end();
    const quick = tracer.startSpan('quick request');
    quick.end();
    expect(names()).toEqual(['slow request']);
  });

  it('a trace in the ratio is exported as it is', () => {
    const { tracer, names } = setup(1);
    tracer.startSpan('request').end();
    expect(names()).toEqual(['request']);
  });

  it("a remote parent's decision is followed: sampled is exported, unsampled only recorded (and kept if it fails)", () => {
    const { tracer, names } = setup(1);
    const remote = (flags: TraceFlags) =>
      trace.setSpanContext(context.active(), { traceId: 'a'.repeat(32), spanId: 'b'.repeat(16), traceFlags: flags, isRemote: true });
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
