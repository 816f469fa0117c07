/**
 * The simulator's own books: each PV's sales, by tid and by reference. A sale keeps the card's
 * BIN and last four digits only.
 */
import { randomUUID } from 'node:crypto';

export type SaleStatus = 'declined' | 'authorized' | 'captured' | 'cancelled';

export interface Operation {
  kind: 'authorize' | 'capture' | 'refund';
  amount: number;
  at: string;
  refundId?: string;
  nsu?: string;
}

export interface Sale {
  tid: string;
  pv: string;
  reference: string;
  nsu: string;
  authorizationCode: string;
  amount: number;
  capture: boolean;
  kind: 'credit' | 'debit';
  installments: number;
  subscription: boolean;
  status: SaleStatus;
  returnCode: string;
  capturedAmount: number;
  refundedAmount: number;
  bin: string;
  last4: string;
  brand: string;
  holder?: string;
  operations: Operation[];
}

export class Books {
  private readonly byPv = new Map<string, { tids: Map<string, Sale>; refs: Map<string, Sale> }>();
  private seq = 0;

  private of(pv: string) {
    let b = this.byPv.get(pv);
    if (!b) this.byPv.set(pv, (b = { tids: new Map(), refs: new Map() }));
    return b;
  }

  get(pv: string, tid: string): Sale | undefined {
    return this.byPv.get(pv)?.tids.get(tid);
  }

  byReference(pv: string, reference: string): Sale | undefined {
    return this.byPv.get(pv)?.refs.get(reference);
  }

  add(sale: Sale): void {
    const b = this.of(sale.pv);
    b.tids.set(sale.tid, sale);
    b.refs.set(sale.reference, sale);
  }

  all(): Sale[] {
    return [...this.byPv.values()].flatMap((b) => [...b.tids.values()]);
  }

  reset(): void {
    this.byPv.clear();
  }

  /** A fresh tid (20 digits), NSU (up to 9 digits) and authorization code (6 digits). */
  ids(): { tid: string; nsu: string; authorizationCode: string } {
    const n = ++this.seq;
    const stamp = Date.now().toString().slice(-9);
    return {
      tid: `1${stamp}${String(n).padStart(10, '0')}`,
      nsu: String(100_000_000 + (n % 900_000_000)),
      authorizationCode: String(100_000 + ((n * 7919) % 900_000)),
    };
  }

  nsu(): string {
    return String(100_000_000 + (++this.seq % 900_000_000));
  }

  refundId(): string {
    return randomUUID();
  }
}

/** e.Rede's timestamps: local Brasília time with its offset. */
export function nowBrt(): string {
  const d = new Date(Date.now() - 3 * 3_600_000);
  return `${d.toISOString().slice(0, 19)}-03:00`;
}
