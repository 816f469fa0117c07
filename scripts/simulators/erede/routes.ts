/** e.Rede's transaction endpoints under `/erede/v1/transactions`, acting on the books. */
import { SimAnswer, SimRequest } from '../faults';
import { captureAnswer, createAnswer, refundAnswer, refundsView, transactionView } from './answers';
import { Code, ret } from './codes';
import { Books, nowBrt, Operation, Sale } from './ledger';
import { followUpAmount, validateCreate } from './validate';

const fail = (status: number, code: Code): SimAnswer => ({ status, body: ret(code) });

export class Routes {
  constructor(private readonly books: Books) {}

  create(pv: string, req: SimRequest): SimAnswer {
    const v = validateCreate(req.body);
    if ('error' in v) return fail(400, v.error);
    const r = v.ok;
    if (this.books.byReference(pv, r.reference)) return fail(400, '42');
    if (r.amount === 0) return { status: 200, body: { reference: r.reference, ...ret('174') } };
    const code: Code = r.card.outcome !== '00' ? r.card.outcome : r.expired ? '112' : '00';
    const approved = code === '00';
    const at = nowBrt();
    const sale: Sale = {
      ...this.books.ids(),
      pv,
      reference: r.reference,
      amount: r.amount,
      capture: r.capture,
      kind: r.kind,
      installments: r.installments,
      subscription: r.subscription,
      status: !approved ? 'declined' : r.capture ? 'captured' : 'authorized',
      returnCode: code,
      capturedAmount: approved && r.capture ? r.amount : 0,
      refundedAmount: 0,
      bin: r.card.bin,
      last4: r.card.last4,
      brand: r.card.brand,
      holder: r.holder,
      operations: [{ kind: 'authorize', amount: r.amount, at }],
    };
    if (approved && r.capture) sale.operations.push({ kind: 'capture', amount: r.amount, at, nsu: sale.nsu });
    this.books.add(sale);
    const brandOpened = String(req.headers['transaction-response'] ?? '').includes('brand-return-opened');
    return { status: approved ? 201 : 402, body: createAnswer(sale, brandOpened) };
  }

  capture(pv: string, tid: string, req: SimRequest): SimAnswer {
    const sale = this.books.get(pv, tid);
    if (!sale) return fail(404, '78');
    const a = followUpAmount(req.body);
    if ('error' in a) return fail(400, a.error);
    if (sale.status !== 'authorized') return fail(400, '171');
    const amount = a.ok ?? sale.amount;
    if (amount > sale.amount) return fail(400, '49');
    const op: Operation = { kind: 'capture', amount, at: nowBrt(), nsu: this.books.nsu() };
    sale.operations.push(op);
    sale.capturedAmount = amount;
    sale.status = 'captured';
    return { status: 200, body: captureAnswer(sale, op) };
  }

  refund(pv: string, tid: string, req: SimRequest): SimAnswer {
    const sale = this.books.get(pv, tid);
    if (!sale) return fail(404, '353');
    const a = followUpAmount(req.body);
    if ('error' in a) return fail(400, a.error);
    if (sale.status === 'cancelled') return fail(400, '355');
    if (sale.status === 'declined') return fail(400, '171');
    const base = sale.status === 'captured' ? sale.capturedAmount : sale.amount;
    const left = base - sale.refundedAmount;
    const amount = a.ok ?? left;
    if (amount > left) return fail(400, '357');
    if (sale.status === 'authorized' && amount !== sale.amount) return fail(400, '365');
    const op: Operation = { kind: 'refund', amount, at: nowBrt(), refundId: this.books.refundId(), nsu: this.books.nsu() };
    sale.operations.push(op);
    sale.refundedAmount += amount;
    if (sale.refundedAmount === base) sale.status = 'cancelled';
    return { status: 200, body: refundAnswer(sale, op) };
  }

  get(pv: string, tid: string): SimAnswer {
    const sale = this.books.get(pv, tid);
    return sale ? { status: 200, body: transactionView(sale, nowBrt()) } : fail(404, '78');
  }

  byReference(pv: string, reference: string | null): SimAnswer {
    if (!reference) return fail(400, '41');
    const sale = this.books.byReference(pv, reference);
    return sale ? { status: 200, body: transactionView(sale, nowBrt()) } : fail(404, '78');
  }

  refunds(pv: string, tid: string): SimAnswer {
    const sale = this.books.get(pv, tid);
    return sale ? { status: 200, body: refundsView(sale) } : fail(404, '78');
  }
}
