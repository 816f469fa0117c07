import { Counter, Gauge, Histogram } from 'prom-client';
import { AcquirerResult, AcquirerUnavailableError, AcquirerUnreachableError } from './acquirer.connector';
import { AnswerLostError } from './http';

/**
 * What the tokenizer's calls to the acquirers look like on /metrics (docs/operations/monitoring.md).
 * Labels are low-cardinality only: the connector, the operation, the outcome and the acquirer's
 * return code; never an amount, a card or a transaction id.
 */

export const acquirerDuration = new Histogram({
  name: 'acquirer_request_duration_seconds',
  help: 'Duration of one call to an acquirer (its breaker included), by acquirer, operation and outcome',
  labelNames: ['acquirer', 'operation', 'outcome'],
  buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10],
});

export const acquirerResponses = new Counter({
  name: 'acquirer_responses_total',
  help: "Calls to an acquirer by acquirer, operation, outcome and the acquirer's return code (none when it gave no answer)",
  labelNames: ['acquirer', 'operation', 'outcome', 'code'],
});

export const acquirerCircuitOpen = new Gauge({
  name: 'acquirer_circuit_open',
  help: "1 while the acquirer's circuit breaker is open or half-open (calls refused, or one trial call let through), else 0",
  labelNames: ['acquirer'],
});

export type AcquirerOutcome = AcquirerResult['outcome'] | 'unavailable' | 'not_found' | 'error';

/** A return code as a label: the acquirers' codes are short; anything else is one value, so a bad answer cannot add series. */
export function codeLabel(code: string | undefined): string {
  return code && /^[A-Za-z0-9_]{1,8}$/.test(code) ? code : code ? 'other' : 'none';
}

/** The outcome of a call that threw: not reached (or refused by the breaker), answer unknown, or anything else. */
export function outcomeOfError(e: unknown): AcquirerOutcome {
  if (e instanceof AcquirerUnavailableError) return 'unavailable';
  if (e instanceof AcquirerUnreachableError || e instanceof AnswerLostError) return 'timeout';
  return 'error';
}
