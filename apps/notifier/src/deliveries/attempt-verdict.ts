import type { DeliveryStatus } from '@app/persistence';
import { MAX_ATTEMPTS, retryDelayMs } from '@app/webhooks';
import type { SendResult } from './webhook-sender';

/** What comes after an attempt (DeliveryWorker turns it into the delivery job's fate). */
export type Outcome =
  | { next: 'done' }
  | { next: 'retry'; delayMs: number; reason: string }
  | { next: 'stop'; reason: string }
  /** Not attempted: over its listener's throttle, due again in `delayMs` (no attempt spent). */
  | { next: 'later'; delayMs: number };

/** An attempt's verdict: the delivery's new state as recorded, the outcome counted, and what comes next. */
export interface Verdict {
  next: { status: DeliveryStatus; nextAttemptAt?: Date; error?: string };
  counted: 'succeeded' | 'blocked' | 'failed' | 'retried';
  outcome: Outcome;
}

/** The attempt's answer as the delivery's last error shows it. */
export function describeResult(result: SendResult): string {
  return result.httpStatus ? `HTTP ${result.httpStatus}` : `${result.errorClass}: ${result.responseBody ?? ''}`;
}

/**
 * Decides what an attempt's answer means for its delivery (no I/O): succeeded; blocked (a refused
 * address); failed (the listener answered 410, or the schedule is exhausted at `position`); or
 * pending again, retried after the schedule's wait (or the listener's Retry-After).
 */
export function verdictOf(deliveryId: string, attempt: number, position: number, result: SendResult, scheduleScale: number): Verdict {
  const describe = describeResult(result);
  if (!result.errorClass) return { next: { status: 'succeeded' }, counted: 'succeeded', outcome: { next: 'done' } };
  if (result.errorClass === 'ssrf_blocked')
    return {
      next: { status: 'blocked', error: describe },
      counted: 'blocked',
      outcome: { next: 'stop', reason: `delivery ${deliveryId} blocked: ${describe}` },
    };
  if (result.httpStatus === 410 || position >= MAX_ATTEMPTS)
    return {
      next: { status: 'failed', error: result.httpStatus === 410 ? 'HTTP 410 Gone: the listener asked us to stop' : describe },
      counted: 'failed',
      outcome: { next: 'stop', reason: `delivery ${deliveryId} failed: ${describe}` },
    };
  const delayMs = retryDelayMs(position, scheduleScale, result.retryAfterMs);
  return {
    next: { status: 'pending', nextAttemptAt: new Date(Date.now() + delayMs), error: describe },
    counted: 'retried',
    outcome: { next: 'retry', delayMs, reason: `delivery ${deliveryId} attempt ${attempt}: ${describe}` },
  };
}
