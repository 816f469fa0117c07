/**
 * The simulator's books: every sale it created, per merchant. Only the masked card is kept; the
 * clear number and the security code never leave the request that carried them.
 */
export type OperationKind = 'authorize' | 'capture' | 'void';

export interface SaleRecord {
  paymentId: string;
  merchantId: string;
  merchantOrderId: string;
  acquirerOrderId?: string;
  tid: string;
  proofOfSale: string;
  authorizationCode?: string;
  amount: number;
  installments: number;
  interest: string;
  captureRequested: boolean;
  recurrent: boolean;
  softDescriptor?: string;
  serviceTaxAmount: number;
  customerName?: string;
  card: { maskedNumber: string; holder: string; expirationDate: string; brand: string; cardOnFile?: { Usage?: string; Reason?: string } };
  status: number;
  returnCode: string;
  returnMessage: string;
  receivedAt: number;
  capturedAmount: number;
  capturedAt?: number;
  voidedAmount: number;
  voidedAt?: number;
  operations: { kind: OperationKind; amount: number; at: string }[];
}

export class SaleBook {
  private byPaymentId = new Map<string, SaleRecord>();
  private byOrder = new Map<string, SaleRecord[]>();
  private byTid = new Map<string, SaleRecord>();

  add(s: SaleRecord): void {
    this.byPaymentId.set(s.paymentId, s);
    this.byTid.set(s.tid, s);
    const key = orderKey(s.merchantId, s.merchantOrderId);
    const list = this.byOrder.get(key);
    if (list) list.push(s);
    else this.byOrder.set(key, [s]);
  }

  /** The merchant's sale by PaymentId; another merchant's sale is not found. */
  get(merchantId: string, paymentId: string): SaleRecord | undefined {
    const s = this.byPaymentId.get(paymentId.toLowerCase());
    return s && s.merchantId === merchantId ? s : undefined;
  }

  byTidOf(merchantId: string, tid: string): SaleRecord | undefined {
    const s = this.byTid.get(tid);
    return s && s.merchantId === merchantId ? s : undefined;
  }

  /** The merchant's sales with this order id, oldest first (Cielo does not refuse a repeated order id). */
  byOrderId(merchantId: string, merchantOrderId: string): SaleRecord[] {
    return this.byOrder.get(orderKey(merchantId, merchantOrderId)) ?? [];
  }

  all(): SaleRecord[] {
    return [...this.byPaymentId.values()];
  }

  clear(): void {
    this.byPaymentId.clear();
    this.byOrder.clear();
    this.byTid.clear();
  }
}

const orderKey = (merchantId: string, orderId: string) => `${merchantId} ${orderId}`;

/** The ledger entry of one sale, as `GET /__sim/ledger` shows it. */
export function ledgerEntry(s: SaleRecord) {
  return {
    paymentId: s.paymentId,
    merchantId: s.merchantId,
    merchantOrderId: s.merchantOrderId,
    tid: s.tid,
    proofOfSale: s.proofOfSale,
    amount: s.amount,
    status: s.status,
    capturedAmount: s.capturedAmount,
    voidedAmount: s.voidedAmount,
    maskedCard: s.card.maskedNumber,
    operations: s.operations,
  };
}
