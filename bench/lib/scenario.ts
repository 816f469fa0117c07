import { BenchStack } from './stack';
import { LoadShape } from './load';

export interface Scenario {
  name: string;
  path: string;
  /** What the baseline server answers: a body of the same size as the gateway's. */
  baselineBody: string;
  shapes: LoadShape[];
  /** The target: a closed-loop throughput floor or a fixed-rate p99 ceiling. */
  target: { shape: 'closed'; rps: number } | { shape: 'fixed'; p99Ms: number };
  prepare?: (stack: BenchStack) => Promise<void>;
  /** Returns the request-body factory (called once per request). */
  body: (stack: BenchStack) => () => string;
}
