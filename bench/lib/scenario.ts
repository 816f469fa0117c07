import { BenchStack } from './stack';
import { LoadShape } from './load';

export type Target = { shape: 'closed'; rps: number } | { shape: 'fixed'; p99Ms: number };

export interface Scenario {
  name: string;
  path: string;
  /** What the baseline server answers: a body of the same size as the gateway's. */
  baselineBody: string;
  shapes: LoadShape[];
  /** The target: a closed-loop throughput floor or a fixed-rate p99 ceiling (none: figures only). */
  target?: Target;
  /** A second target on the other load shape, when the issue sets one. */
  extraTarget?: Target;
  /** Also measured against the bare sale pipeline (bench/lib/baseline.ts), the sale's own floor. */
  barePipeline?: boolean;
  prepare?: (stack: BenchStack) => Promise<void>;
  /** Returns the request-body factory (called once per request). */
  body: (stack: BenchStack) => () => string;
  /**
   * Runs right after the gateway's load of each shape (before the baseline's, which would compete
   * for the CPU), e.g. to wait for asynchronous work the load left behind. Returns a report line,
   * and how much of that work never completed (a failed run).
   */
  afterLoad?: (stack: BenchStack, loadEndedAt: number) => Promise<{ note: string; failures: number }>;
}

/** A figure that is not an HTTP request rate: an in-process loop or an asynchronous pipeline. */
export interface Figure {
  name: string;
  unit: string;
  value: number;
  /** The same work stripped to the bare minimum, in the same run (same unit). */
  baseline: number;
  /** A floor for `value`, when the issue sets one. */
  target?: number;
  /** A ceiling `value` must stay under (a latency), when the issue sets one. */
  ceiling?: number;
  /** Verdict text when there is no target (e.g. a bound by design). */
  note?: string;
  /** Further figures for the report (latencies, duplicates). */
  detail?: string;
  /** Work that never completed (e.g. webhooks not delivered in time): a failed run. */
  failures?: number;
}
