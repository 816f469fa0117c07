import {
  createHistogram,
  monitorEventLoopDelay,
  PerformanceObserver,
  type IntervalHistogram,
  type RecordableHistogram,
} from 'node:perf_hooks';
import { Gauge } from 'prom-client';

/**
 * What holds this process's event loop up, as the tail of its answers sees it: how late the loop
 * comes back to a timer (perf_hooks.monitorEventLoopDelay), and V8's garbage-collection pauses
 * (PerformanceObserver 'gc'). Both are windows: each scrape of /metrics reports what happened since
 * the previous scrape and starts a new window, so a reader that scrapes at the start and at the end
 * of a load phase (the bench) reads that phase alone. A window's loop delay starts at its first
 * timer sample: a stall that straddles the scrape counts in neither window. prom-client's own nodejs_eventloop_lag_* and
 * nodejs_gc_duration_seconds stay beside them (10 ms sampling and coarse buckets: too blunt for a
 * 10 ms tail).
 */
const RESOLUTION_MS = 2;

export interface PauseWindow {
  /** Delay past the timer's due time, ms: p50, p99, max. */
  loop: { p50: number; p99: number; max: number };
  /** Garbage-collection pauses, ms: how many, their sum, p99 and the longest. */
  gc: { count: number; sumMs: number; p99: number; max: number };
}

const ns = (v: number) => v / 1e6;

let loop: IntervalHistogram | undefined;
let gc: RecordableHistogram | undefined;
let gcSumNs = 0;

/** Starts both monitors once per process (every app calls it through OpsModule). */
export function startPauseMonitors(): void {
  if (loop) return;
  loop = monitorEventLoopDelay({ resolution: RESOLUTION_MS });
  loop.enable();
  const pauses = createHistogram();
  gc = pauses;
  new PerformanceObserver((list) => {
    for (const entry of list.getEntries()) {
      // duration is in ms (fractional); the histogram takes integers, ns keeps sub-ms pauses apart.
      const d = Math.max(1, Math.round(entry.duration * 1e6));
      pauses.record(d);
      gcSumNs += d;
    }
  }).observe({ entryTypes: ['gc'] });
  new Gauge({
    name: 'pause_window_seconds',
    help:
      'Since the previous scrape: event-loop delay past a timer due every 2 ms (source=eventloop: p50, p99, max) and ' +
      'garbage-collection pauses (source=gc: p99, max, sum, and count, a number of pauses)',
    labelNames: ['source', 'stat'],
    collect() {
      const w = takePauseWindow();
      for (const stat of ['p50', 'p99', 'max'] as const) this.set({ source: 'eventloop', stat }, w.loop[stat] / 1000);
      this.set({ source: 'gc', stat: 'p99' }, w.gc.p99 / 1000);
      this.set({ source: 'gc', stat: 'max' }, w.gc.max / 1000);
      this.set({ source: 'gc', stat: 'sum' }, w.gc.sumMs / 1000);
      this.set({ source: 'gc', stat: 'count' }, w.gc.count);
    },
  });
}

/** What the monitors saw since the previous call, in ms; starts a new window. */
export function takePauseWindow(): PauseWindow {
  const w: PauseWindow = { loop: { p50: 0, p99: 0, max: 0 }, gc: { count: 0, sumMs: 0, p99: 0, max: 0 } };
  if (loop && loop.count > 0) {
    // Each sample is the time between two timer callbacks: the resolution itself, plus the delay.
    const late = (v: number) => Math.max(0, ns(v) - RESOLUTION_MS);
    w.loop = { p50: late(loop.percentile(50)), p99: late(loop.percentile(99)), max: late(loop.max) };
    loop.reset();
  }
  if (gc && gc.count > 0) {
    w.gc = { count: gc.count, sumMs: ns(gcSumNs), p99: ns(gc.percentile(99)), max: ns(gc.max) };
    gc.reset();
    gcSumNs = 0;
  }
  return w;
}
