import { DomainError, ErrorCodes, Events, TransactionStatus } from '@app/contracts';
import type { OperationKind, OperationRow, TransactionRow, Transition } from '@app/persistence';

/** What a capture or cancel of `amount` cents would do, judged against the transaction as it is. */
export interface Judged {
  amount: number;
  change: Transition;
  event: typeof Events.TransactionCaptured | typeof Events.TransactionCancelled;
}

/**
 * The rules of captures and cancels, in one place: what the transaction allows now, and the change
 * an approved operation makes. Throws the refusal the state implies (409 with the family's code,
 * or 400 naming `amount`); never looks at anything but the row, so a waiting operation is judged
 * against exactly what the one before it left.
 */
export function judge(kind: OperationKind, row: TransactionRow, requested: number | undefined): Judged {
  return kind === 'capture' ? judgeCapture(row, requested) : judgeCancel(row, requested);
}

function judgeCapture(row: TransactionRow, requested: number | undefined): Judged {
  if (row.status !== TransactionStatus.Authorized) {
    if (
      row.status === TransactionStatus.Approved ||
      (row.status === TransactionStatus.PartialCancelled && Number(row.captured_amount) > 0)
    ) {
      throw conflict(ErrorCodes.AlreadyCaptured, 'The transaction is already captured.');
    }
    if (row.status === TransactionStatus.Cancelled || row.status === TransactionStatus.PartialCancelled)
      throw conflict(ErrorCodes.AlreadyCancelled, 'The transaction is cancelled.');
    throw conflict(ErrorCodes.InvalidState, 'Only an authorized transaction can be captured.');
  }
  const amount = requested ?? Number(row.amount);
  if (amount > Number(row.amount)) {
    throw DomainError.validation(ErrorCodes.InvalidField, 'amount', `amount must not exceed the authorized ${row.amount} cents.`);
  }
  return { amount, change: { status: TransactionStatus.Approved, capturedAmount: amount }, event: 'transaction.captured' };
}

function judgeCancel(row: TransactionRow, requested: number | undefined): Judged {
  if (row.status === TransactionStatus.Cancelled) throw conflict(ErrorCodes.AlreadyCancelled, 'The transaction is already cancelled.');
  if (
    row.status !== TransactionStatus.Authorized &&
    row.status !== TransactionStatus.Approved &&
    row.status !== TransactionStatus.PartialCancelled
  ) {
    throw conflict(ErrorCodes.InvalidState, 'Only an authorized or approved transaction can be cancelled.');
  }
  const base = cancelBase(row);
  // What a chargeback already returned to the cardholder cannot be refunded a second time.
  const remaining = base - Number(row.cancelled_amount) - Number(row.charged_back_amount);
  if (remaining <= 0) throw conflict(ErrorCodes.InvalidState, 'Nothing is left to cancel: what was not cancelled was charged back.');
  const amount = requested ?? remaining;
  if (amount > remaining) {
    throw DomainError.validation(
      ErrorCodes.InvalidField,
      'amount',
      `amount must not exceed the ${remaining} cents that can still be cancelled.`,
    );
  }
  const cancelled = Number(row.cancelled_amount) + amount;
  return {
    amount,
    change: { status: cancelled === base ? TransactionStatus.Cancelled : TransactionStatus.PartialCancelled, cancelledAmount: cancelled },
    event: 'transaction.cancelled',
  };
}

/**
 * The change of an operation that already holds `row`, as judged when it claimed: nothing else
 * moves a held transaction's status or amounts (a chargeback meanwhile stayed clear of its amount).
 */
export function judgeHeld(op: Pick<OperationRow, 'kind' | 'amount'>, row: TransactionRow): Judged {
  return judge(op.kind, row, Number(op.amount));
}

/** An authorization is cancelled against what was authorized, a capture against what was captured. */
function cancelBase(row: Pick<TransactionRow, 'status' | 'amount' | 'captured_amount'>): number {
  return row.status === TransactionStatus.Authorized || Number(row.captured_amount) === 0
    ? Number(row.amount)
    : Number(row.captured_amount);
}

export function conflict(code: DomainError['code'], message: string): DomainError {
  return new DomainError('conflict', code, message, 'transactionId');
}
