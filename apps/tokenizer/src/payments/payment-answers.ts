import { AuthorizeRequest, DomainError, ErrorCodes, Events, TransactionEvent, TransactionStatus, TransactionView } from '@app/contracts';
import { pendingRowOf, saleSnapshotOf } from '@app/persistence';
import type { OperationKind, OutboxEvent, TransactionRow, Transition } from '@app/persistence';
import type { AcquirerResult, OperationRef, Route } from '@app/acquirer';
import { transactionViewOf } from '@app/split';
import { conflict } from './operation-rules';
import { currentTraceparent } from '@app/platform/tracing';

/**
 * The row the API recorded with the request, if it is this sale's, undecided. A job queued before
 * the request carried a snapshot (it carried the table row, without `merchantId`) does not fit:
 * its sale is read back, which costs that job one read and keeps no second reader of the old shape.
 */
export function recordedRow(req: AuthorizeRequest): TransactionRow | undefined {
  const sale = req.recorded;
  const fits =
    sale?.id === req.transactionId.toLowerCase() &&
    sale.merchantId === req.merchantId.toLowerCase() &&
    sale.status === TransactionStatus.Waiting &&
    sale.statusVersion === 1;
  return fits ? pendingRowOf(sale) : undefined;
}

/** A transaction's answer, from its row. */
export function viewOfRow(row: TransactionRow): TransactionView {
  return transactionViewOf(saleSnapshotOf(row));
}

export function processorOf(r: AcquirerResult): Transition['processor'] {
  return {
    tid: r.tid,
    nsu: r.nsu,
    authorizationCode: r.authorizationCode ?? '',
    returnCode: r.returnCode,
    returnMessage: r.returnMessage,
    ...(r.saleRef ? { saleRef: r.saleRef } : {}),
  };
}

/** What a connector needs to find out what became of a capture or cancel of `row` (still holding its amounts from before it). */
export function operationRef(row: TransactionRow, kind: OperationKind, operationKey: string, amount: number, route: Route): OperationRef {
  return {
    operationKey,
    kind,
    transactionId: row.id,
    account: route.account,
    tid: row.processor.tid,
    saleRef: row.processor.saleRef,
    amount,
    before: { captured: Number(row.captured_amount), cancelled: Number(row.cancelled_amount) },
  };
}

/** A settle event of a change: the event's name and the cents it moved. */
export interface SettleEvent {
  event: string;
  amount: number;
}

/**
 * The settle and notify events of a change. Cumulative amounts travel with every event:
 * settlement applies them idempotently, whatever the order.
 */
export function eventsOf(updated: TransactionRow, extra: SettleEvent[]): OutboxEvent[] {
  const view = viewOfRow(updated);
  const base = {
    transactionId: view.id,
    merchantId: updated.merchant_id,
    statusVersion: view.statusVersion,
    capturedAmount: view.capturedAmount,
    cancelledAmount: view.cancelledAmount,
    // Settlement and the webhook continue the change's trace (absent when untraced).
    traceparent: currentTraceparent(),
  };
  const settle = extra.map((e) => ({
    event: e.event as OutboxEvent['event'],
    payload: { ...base, amount: e.amount } satisfies TransactionEvent,
  }));
  // status_changed asks the notifier for a webhook, so it exists only where a listener does:
  // a sale without urlReturn would cost a queue job the notifier can only drop.
  if (!updated.url_return) return settle;
  // The notifier renders the webhook from this snapshot: the row may have moved on by then.
  return [
    {
      event: Events.TransactionStatusChanged,
      payload: { ...base, status: view.status, urlReturn: updated.url_return, view } satisfies TransactionEvent,
    },
    ...settle,
  ];
}

export function notFound(): DomainError {
  return new DomainError('not_found', ErrorCodes.TransactionNotFound, 'Transaction not found.', 'transactionId');
}

export function busy(): DomainError {
  return conflict(
    ErrorCodes.OperationInProgress,
    'Another capture or cancel of this transaction is still in progress; nothing was done. Retry, with the same Idempotency-Key.',
  );
}

export function lateStart(): DomainError {
  return conflict(
    ErrorCodes.OperationInProgress,
    'The gateway could not start the operation in time; nothing was done. Retry, with the same Idempotency-Key.',
  );
}

export const LOST_ANSWER =
  'The acquirer did not answer; the gateway records its outcome as soon as it does. Retry with the same Idempotency-Key.';

export function unavailable(message: string): DomainError {
  return new DomainError('unavailable', ErrorCodes.ServiceUnavailable, message);
}

/** The acquirer's answer, or a rejection once `ms` have passed (the answer then counts as lost). */
export function withTimeout<T>(work: Promise<T>, ms: number): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<never>((_, reject) => (timer = setTimeout(() => reject(new Error(`no answer within ${ms} ms`)), ms)));
  return Promise.race([work, late]).finally(() => clearTimeout(timer));
}

export const sleep = (ms: number) => new Promise((r) => setTimeout(r, Math.max(0, ms)));
