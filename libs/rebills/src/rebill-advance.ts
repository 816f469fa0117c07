import { RebillState, TransactionEvent } from '@app/contracts';
import type { AdvanceResult, AdvanceRow, CycleRow, RebillRow } from '@app/persistence';
import { scheduleOf } from './charges';
import { rebillViewOf } from './rebill-view';
import { nextStep } from './schedule';

/**
 * Where a rebill moves on to from its decided charge: no SQL here, the repository locks the rows,
 * writes these and records the events.
 */
export interface AdvanceUpdate {
  /** The rebill as locked, before this advance. */
  r: AdvanceRow;
  state: RebillState;
  cycle: number;
  attempt: number;
  due: Date | null;
  reason: string | null;
}

/** The next step of a rebill whose open charge is decided; one no longer active keeps where it stands. */
export function decideAdvance(r: AdvanceRow): AdvanceUpdate {
  if (r.state !== 'active')
    return { r, state: r.state, cycle: r.next_cycle, attempt: r.next_attempt, due: null, reason: r.suspended_reason };
  const next = nextStep(scheduleOf(r), {
    cycle: r.c_cycle,
    attempt: r.c_attempt,
    status: r.t_status,
    errorCode: r.t_error_code,
    returnCode: r.t_return_code ?? undefined,
    attemptedAt: r.c_opened_at,
  });
  return { r, state: next.state, cycle: next.nextCycle, attempt: next.nextAttempt, due: next.nextDueAt, reason: next.reason ?? null };
}

/** This advance suspended the rebill (it was active before). */
export const suspends = (u: AdvanceUpdate): boolean => u.r.state === 'active' && u.state === 'suspended';

/** The suspensions the merchant hears of on its listener: those of rebills with one (each charge's outcome is the charge's own event). */
export const suspensionsToTell = (updates: readonly AdvanceUpdate[]): AdvanceUpdate[] =>
  updates.filter((u) => suspends(u) && u.r.url_return);

/** The transaction event telling of a suspension, with the rebill as it now is and its `cycles` so far. */
export function suspensionEvent(u: AdvanceUpdate, cycles: readonly CycleRow[]): TransactionEvent {
  const row: RebillRow = {
    ...u.r,
    state: 'suspended',
    next_due_at: null,
    open_transaction_id: null,
    suspended_reason: u.reason,
    version: u.r.version + 1,
  };
  const view = rebillViewOf(row, cycles);
  return {
    transactionId: view.id,
    merchantId: u.r.merchant_id,
    statusVersion: view.statusVersion,
    status: view.status,
    capturedAmount: 0,
    cancelledAmount: 0,
    urlReturn: u.r.url_return!,
    view,
  };
}

/** What each advance answers, by rebill id. */
export function advanceResults(updates: readonly AdvanceUpdate[]): Map<string, AdvanceResult> {
  return new Map(
    updates.map((u) => [
      u.r.id,
      { rebillId: u.r.id, transactionId: u.r.open_transaction_id!, state: u.state, suspended: suspends(u) ? u.reason! : undefined },
    ]),
  );
}
