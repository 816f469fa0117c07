import { OperationIds, OperationName, StatusMessages, TransactionView } from '@app/contracts';

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
    split: [] as unknown[],
  };
}
export type TransactionResponse = ReturnType<typeof toTransactionResponse>;
