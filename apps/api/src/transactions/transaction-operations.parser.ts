import { DomainError, ErrorCodes } from '@app/contracts';
import { JsonObject, optionalInt, optionalString } from '../envelope/scalars';

const GUID = /^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$/;

function transactionId(op: JsonObject): string {
  const id = optionalString(op, 'transactionId', 'transactionId', { max: 36 });
  if (id === undefined) throw DomainError.validation(ErrorCodes.MissingField, 'transactionId', 'transactionId is required.');
  if (!GUID.test(id)) throw DomainError.validation(ErrorCodes.InvalidField, 'transactionId', 'transactionId must be a GUID such as 52580F07-80FD-3241-DAE2-BDC38138193A.');
  return id.toUpperCase();
}

/** capture / cancel: the transaction, and an optional amount in cents (partial). */
export function parseCapture(op: JsonObject): { transactionId: string; amount?: number } {
  return { transactionId: transactionId(op), amount: optionalInt(op, 'amount', 'amount', 1) };
}

export const parseCancel = parseCapture;

/** report: by transactionId, or by reference (the merchant's latest with it); exactly one. */
export function parseReport(op: JsonObject): { transactionId: string } | { reference: string } {
  const reference = optionalString(op, 'reference', 'reference', { max: 64 });
  const hasId = op.transactionId !== undefined && op.transactionId !== null && op.transactionId !== '';
  if (hasId && reference !== undefined) throw DomainError.validation(ErrorCodes.InvalidField, 'reference', 'Send either transactionId or reference, not both.');
  if (reference !== undefined) return { reference };
  return { transactionId: transactionId(op) };
}
