import CircuitBreaker from 'opossum';
import {
  AcquirerConnector,
  AcquirerResult,
  AcquirerUnavailableError,
  AcquirerUnreachableError,
  AuthorizeCommand,
  FollowUpCommand,
  OperationRef,
  SaleBooks,
  SaleRef,
} from './acquirer.connector';
import { acquirerCircuitOpen } from './acquirer-metrics';

export interface BreakerSettings {
  /** Of the calls in the rolling window, the share that fails (percent) before the breaker opens. */
  errorPercent: number;
  /** Calls in the window before the share counts at all (a quiet acquirer is not judged on two calls). */
  minCalls: number;
  /** How long it stays open before one call is let through to try the acquirer again. */
  resetMs: number;
  /** The rolling window. */
  windowMs: number;
}

/** Failures that say the acquirer is down or not answering; a decline or a refused request is an answer. */
const isOutage = (e: unknown) => e instanceof AcquirerUnavailableError || e instanceof AcquirerUnreachableError;

/**
 * A connector behind a circuit breaker (opossum), one per acquirer and process: while the acquirer
 * keeps failing, each call is refused at once with AcquirerUnavailableError (the sale is recorded
 * as not charged, code 102) instead of holding a worker for a connect and a response timeout.
 * After `resetMs` one call goes through; its answer closes the breaker or opens it again.
 */
export class BreakerConnector implements AcquirerConnector {
  readonly name: string;
  private readonly breaker: CircuitBreaker<[() => Promise<unknown>], unknown>;

  constructor(
    private readonly inner: AcquirerConnector,
    settings: BreakerSettings,
    onStateChange?: (state: 'open' | 'half-open' | 'closed') => void,
  ) {
    this.name = inner.name;
    this.breaker = new CircuitBreaker((call: () => Promise<unknown>) => call(), {
      timeout: false,
      errorThresholdPercentage: settings.errorPercent,
      volumeThreshold: settings.minCalls,
      resetTimeout: settings.resetMs,
      rollingCountTimeout: settings.windowMs,
      // Only outages count against the acquirer: a decline, a 4xx or a bug in the caller does not.
      errorFilter: (e: unknown) => !isOutage(e),
    });
    // acquirer_circuit_open: 1 from the moment it opens until a trial call closes it again.
    const gauge = (open: boolean) => acquirerCircuitOpen.set({ acquirer: this.name }, open ? 1 : 0);
    gauge(false);
    this.breaker.on('open', () => (gauge(true), onStateChange?.('open')));
    this.breaker.on('halfOpen', () => (gauge(true), onStateChange?.('half-open')));
    this.breaker.on('close', () => (gauge(false), onStateChange?.('closed')));
  }

  get opened(): boolean {
    return this.breaker.opened;
  }

  authorize(cmd: AuthorizeCommand): Promise<AcquirerResult> {
    return this.call(() => this.inner.authorize(cmd));
  }
  capture(cmd: FollowUpCommand): Promise<AcquirerResult> {
    return this.call(() => this.inner.capture(cmd));
  }
  cancel(cmd: FollowUpCommand): Promise<AcquirerResult> {
    return this.call(() => this.inner.cancel(cmd));
  }
  reverse(cmd: FollowUpCommand): Promise<AcquirerResult> {
    return this.call(() => this.inner.reverse(cmd));
  }
  inquire(ref: OperationRef): Promise<AcquirerResult | undefined> {
    return this.call(() => this.inner.inquire(ref));
  }
  settle(ref: OperationRef): Promise<AcquirerResult> {
    return this.call(() => this.inner.settle(ref));
  }
  /** Reconciliation is an operator's deliberate pass: it goes straight through. */
  books(sales: readonly SaleRef[]): Promise<Map<string, SaleBooks>> {
    return this.inner.books(sales);
  }
  booksSince(now: Date): Date | undefined {
    return this.inner.booksSince(now);
  }

  private async call<T>(work: () => Promise<T>): Promise<T> {
    try {
      return (await this.breaker.fire(work)) as T;
    } catch (e) {
      if ((e as { code?: string }).code === 'EOPENBREAKER') {
        throw new AcquirerUnavailableError(this.name, `${this.name}: failing, not called for now (circuit breaker open)`);
      }
      throw e;
    }
  }
}
