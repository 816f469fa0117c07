import { BenchStack } from './stack';
import { LoadShape } from './load';

export type Target = { shape: 'closed'; rps: number } | { shape: 'fixed'; p99Ms: number };

export interface Scenario {
  name: string;
  path: string;
  /** What the baseline server answers: a body of the same size as the gateway's. */
  baselineBody: string;
  shapes: LoadShape[];
  /** The target: a closed-loop throughput floor or a fixed-rate p99 ceiling. */
  target: Target;
  /** A second target on the other load shape, when the issue sets one. */
  extraTarget?: Target;
  prepare?: (stack: BenchStack) => Promise<void>;
  /** Returns the request-body factory (called once per request). */
  body: (stack: BenchStack) => () => string;
}
