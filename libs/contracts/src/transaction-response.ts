import type { PartyShare } from './split';
import { OperationIds, OperationName, StatusMessages, TransactionView } from './transactions';

const cents = (p: PartyShare) => ({ grossAmount: String(p.gross), feeAmount: String(p.fee), netAmount: String(p.net) });

/** WIRE.md 4.1: the TransactionResponse, for every operation and the webhook; scalars are strings. */
export function toTransactionResponse(v: TransactionView, operation: OperationName = v.operation) {
  return {
    transactionId: v.id,
    operationId: String(OperationIds[operation]),
    status: String(v.status),
    message: StatusMessages[v.status],
    errorCode: v.errorCode,
    statusVersion: String(v.statusVersion),
    order: { reference: v.reference, currency: v.currency, totalAmount: String(v.amount), dateTime: v.createdAt },
    processor: {
      acquirer: String(v.acquirer),
      tid: v.processor.tid ?? '',
      nsu: v.processor.nsu ?? '',
      authorizationCode: v.processor.authorizationCode ?? '',
      returnCode: v.processor.returnCode ?? '',
      returnMessage: v.processor.returnMessage ?? '',
      numberOfPayments: String(v.instalments),
      amount: String(v.amount),
      capturedAmount: String(v.capturedAmount),
      cancelledAmount: String(v.cancelledAmount),
    },
    tokenCard: v.tokenCard ?? '',
    split: (v.split?.entries ?? []).map((e) => ({ recipient: e.recipient, ...cents(e), mode: e.mode, liable: String(e.liable) })),
    // What the merchant keeps of the split and the operator's processing fee, in cents.
    ...(v.split ? { splitResidual: cents(v.split.merchant), processingFee: String(v.split.fee) } : {}),
    // The same words as split[] and splitResidual: recipient (an id, or "merchant") and the cents.
    ...(v.payables
      ? {
          payables: v.payables.map((p) => ({
            recipient: p.party,
            kind: p.kind,
            instalment: String(p.instalment),
            dueDate: p.dueDate,
            ...cents(p),
            status: p.status,
          })),
        }
      : {}),
  };
}
export type TransactionResponse = ReturnType<typeof toTransactionResponse>;
