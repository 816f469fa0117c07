import type * as A from './acquirer.connector';
import { inSpan, SpanKind } from '@app/platform/tracing';
import { acquirerDuration, acquirerResponses, AcquirerOutcome, codeLabel, outcomeOfError } from './acquirer-metrics';

/**
 * A connector whose every call is timed and counted: the one place every sale, capture, cancel,
 * reversal, inquiry and settlement passes through on its way to an acquirer (createAcquirerRouter
 * wraps each connector, the breaker inside it, so a call the breaker refuses counts as
 * `unavailable`). Reconciliation's book reads go straight through: an operator's pass, not the
 * sale pipeline.
 */
export class MeteredConnector implements A.AcquirerConnector {
  readonly name: string;
  readonly touchedSince?: (since: Date) => Promise<string[]>;

  constructor(private readonly inner: A.AcquirerConnector) {
    this.name = inner.name;
    if (inner.touchedSince) this.touchedSince = (since) => inner.touchedSince!(since);
  }

  authorize(cmd: A.AuthorizeCommand): Promise<A.AcquirerResult> {
    return this.measure('authorize', () => this.inner.authorize(cmd));
  }
  capture(cmd: A.FollowUpCommand): Promise<A.AcquirerResult> {
    return this.measure('capture', () => this.inner.capture(cmd));
  }
  cancel(cmd: A.FollowUpCommand): Promise<A.AcquirerResult> {
    return this.measure('cancel', () => this.inner.cancel(cmd));
  }
  reverse(cmd: A.FollowUpCommand): Promise<A.AcquirerResult> {
    return this.measure('reverse', () => this.inner.reverse(cmd));
  }
  inquire(ref: A.OperationRef): Promise<A.AcquirerResult | undefined> {
    return this.measure('inquire', () => this.inner.inquire(ref));
  }
  settle(ref: A.OperationRef): Promise<A.AcquirerResult> {
    return this.measure('settle', () => this.inner.settle(ref));
  }
  books(sales: readonly A.SaleRef[]): Promise<Map<string, A.SaleBooks>> {
    return this.inner.books(sales);
  }
  booksSince(now: Date): Date | undefined {
    return this.inner.booksSince(now);
  }

  private async measure<T extends A.AcquirerResult | undefined>(operation: string, call: () => Promise<T>): Promise<T> {
    const started = process.hrtime.bigint();
    const record = (outcome: AcquirerOutcome, code: string) => {
      const labels = { acquirer: this.name, operation, outcome };
      acquirerDuration.observe(labels, Number(process.hrtime.bigint() - started) / 1e9);
      acquirerResponses.inc({ ...labels, code });
    };
    const attributes = { 'gateway.acquirer': this.name, 'gateway.acquirer.operation': operation };
    // The call's span (its HTTP request's parent) says what the acquirer answered, never what was sent.
    return inSpan(`acquirer ${operation}`, { kind: SpanKind.CLIENT, attributes }, async (span) => {
      let result: T;
      try {
        result = await call();
      } catch (e) {
        record(outcomeOfError(e), 'none');
        span.setAttribute('gateway.acquirer.outcome', outcomeOfError(e));
        throw e;
      }
      // An inquiry the acquirer has no record of: it answered, and there is nothing to report.
      if (result === undefined) record('not_found', 'none');
      else record(result.outcome, codeLabel(result.returnCode));
      span.setAttributes({
        'gateway.acquirer.outcome': result?.outcome ?? 'not_found',
        'gateway.acquirer.return_code': result ? codeLabel(result.returnCode) : 'none',
      });
      return result;
    });
  }
}
