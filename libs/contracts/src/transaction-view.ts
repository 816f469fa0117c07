import type { SplitResult } from './split';
import { SaleSnapshot, TransactionView } from './transactions';

/** The processor block as merchants see it: the acquirer's values, without the gateway's own follow-up reference. */
function wireProcessor(p: TransactionView['processor'] | null | undefined): TransactionView['processor'] {
  if (!p) return {};
  if (p.saleRef === undefined) return p;
  const out = { ...p };
  delete out.saleRef;
  return out;
}

/**
 * The answer for a transaction as stored; its split, computed by the split engine from the terms
 * frozen at the sale, is the caller's to give.
 */
export function toTransactionView(sale: SaleSnapshot, split: SplitResult | undefined): TransactionView {
  const charge = sale.details.rebill;
  return {
    id: sale.id.toUpperCase(),
    operation: sale.operation,
    status: sale.status,
    statusVersion: sale.statusVersion,
    errorCode: sale.errorCode,
    reference: sale.reference,
    currency: sale.currency,
    amount: sale.amount,
    capturedAmount: sale.capturedAmount,
    cancelledAmount: sale.cancelledAmount,
    acquirer: sale.acquirer,
    instalments: sale.instalments,
    createdAt: sale.createdAt,
    processor: wireProcessor(sale.processor),
    tokenCard: sale.tokenCard,
    split,
    ...(charge ? { rebillCharge: { rebillId: charge.id, cycle: charge.cycle, attempt: charge.attempt } } : {}),
  };
}
