import type { RebillDetailsView, RebillPaymentView } from './rebill-view';
import type { PartyShare } from './split';
import { OperationIds, OperationName, StatusMessages, TransactionStatus, TransactionView } from './transactions';

const cents = (p: PartyShare) => ({ grossAmount: String(p.gross), feeAmount: String(p.fee), netAmount: String(p.net) });

/** docs/merchants/sales.md: the TransactionResponse, for every operation and the webhook; scalars are strings. */
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
      // A rebill's cycles: an object keyed "1", "2", … (the family's plugins iterate it, its SDK reads payments["1"]).
      ...(v.payments ? { payments: paymentsOf(v.payments) } : {}),
    },
    tokenCard: v.tokenCard ?? '',
    split: (v.split?.entries ?? []).map((e) => ({ recipient: e.recipient, ...cents(e), mode: e.mode, liable: String(e.liable) })),
    // What the merchant keeps of the split and the operator's processing fee, in cents.
    ...(v.split ? { splitResidual: cents(v.split.merchant), processingFee: String(v.split.fee) } : {}),
    ...(v.rebill ? { rebill: rebillOf(v.rebill) } : {}),
    ...(v.rebillCharge
      ? {
          rebillPayment: {
            rebillId: v.rebillCharge.rebillId,
            cycle: String(v.rebillCharge.cycle),
            attempt: String(v.rebillCharge.attempt),
          },
        }
      : {}),
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
function paymentsOf(payments: RebillPaymentView[]) {
  return Object.fromEntries(
    payments.map((p) => [
      String(p.cycle),
      {
        payment: {
          date: p.date,
          tid: p.tid,
          ticket: p.ticket,
          amount: String(p.amount),
          status: String(p.status),
          message: StatusMessages[p.status as TransactionStatus],
          errorCode: p.errorCode,
          returnCode: p.returnCode,
          returnMessage: p.returnMessage,
          attempt: String(p.attempt),
        },
      },
    ]),
  );
}

function rebillOf(r: RebillDetailsView) {
  return {
    state: r.state.toUpperCase(),
    period: String(r.period),
    frequency: String(r.frequency),
    dateStart: r.dateStart,
    dateEnd: r.dateEnd,
    nextDate: r.nextDate ?? '',
    cycles: String(r.cycles),
    cardExpiresBeforeEnd: String(r.cardExpiresBeforeEnd),
    ...(r.suspendedReason ? { suspendedReason: r.suspendedReason } : {}),
  };
}

export type TransactionResponse = ReturnType<typeof toTransactionResponse>;
