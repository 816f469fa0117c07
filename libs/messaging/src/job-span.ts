import { runWithCorrelationId } from '@app/platform/correlation';
import { jobDuration, jobWait } from '@app/platform/metrics';
import { Attributes, inSpan, pastSpan, SpanKind, withTraceparent } from '@app/platform/tracing';
import type { JobEnvelope } from './job-envelope';

/**
 * A job's work in its request's trace: its wait in the queue (first delivery only), then a span of
 * its own, under the job's correlation id; both timed in job_wait_seconds and job_duration_seconds.
 */
export function inJobSpan<T>(
  pattern: string,
  envelope: JobEnvelope,
  queuedAt: number | undefined,
  attempt: number,
  fn: () => Promise<T>,
): Promise<T> {
  return runWithCorrelationId(envelope.c, () =>
    withTraceparent(envelope.t, () => {
      const attributes: Attributes = { 'messaging.system': 'bullmq', 'messaging.destination.name': pattern, 'gateway.attempt': attempt };
      const tx = (envelope.p as { transactionId?: unknown } | null)?.transactionId;
      if (typeof tx === 'string') attributes['gateway.transaction_id'] = tx.toUpperCase();
      const now = Date.now();
      if (queuedAt !== undefined && Number.isFinite(queuedAt)) {
        jobWait.observe({ pattern }, Math.max(0, now - queuedAt) / 1000);
        pastSpan(`queue wait ${pattern}`, queuedAt, now, attributes);
      }
      const handled = jobDuration.startTimer({ pattern });
      return inSpan(`process ${pattern}`, { kind: SpanKind.CONSUMER, attributes }, fn).finally(() => handled());
    }),
  );
}
