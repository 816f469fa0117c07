/** The JSON e.Rede answers, built from a sale (never from a request: no card number to leak). */
import { CODES, Code } from './codes';
import { Operation, Sale } from './ledger';

const AUTH_STATUS: Record<Sale['status'], string> = {
  declined: 'Denied',
  authorized: 'Approved',
  captured: 'Approved',
  cancelled: 'Canceled',
};

/** The network's own code beside e.Rede's, as `brand-return-opened` asks for. */
const BRAND_CODES: Partial<Record<string, [string, string]>> = {
  '00': ['00', 'Success.'],
  '105': ['62', 'Restricted card.'],
  '109': ['14', 'Invalid card number.'],
  '111': ['51', 'Insufficient funds.'],
  '112': ['54', 'Expired card.'],
  '119': ['N7', 'Invalid security code.'],
};

function brand(sale: Sale) {
  const [returnCode, returnMessage] = BRAND_CODES[sale.returnCode] ?? ['05', 'Do not honor.'];
  return { name: sale.brand, returnCode, returnMessage };
}

function links(sale: Sale) {
  const href = `/v1/transactions/${sale.tid}`;
  return [
    { method: 'GET', rel: 'transaction', href },
    { method: 'POST', rel: 'refund', href: `${href}/refunds` },
  ];
}

const message = (code: string) => CODES[code as Code] ?? '';

/** The answer to `POST /v1/transactions`. */
export function createAnswer(sale: Sale, brandOpened: boolean): Record<string, unknown> {
  const approved = sale.returnCode === '00';
  return {
    reference: sale.reference,
    tid: sale.tid,
    nsu: sale.nsu,
    ...(approved ? { authorizationCode: sale.authorizationCode } : {}),
    dateTime: sale.operations[0].at,
    amount: sale.amount,
    installments: sale.installments,
    cardBin: sale.bin,
    last4: sale.last4,
    ...(brandOpened ? { brand: brand(sale) } : {}),
    returnCode: sale.returnCode,
    returnMessage: message(sale.returnCode),
    links: links(sale),
  };
}

/** The answer to `PUT /v1/transactions/{tid}`. */
export function captureAnswer(sale: Sale, op: Operation): Record<string, unknown> {
  return {
    reference: sale.reference,
    tid: sale.tid,
    nsu: op.nsu,
    authorizationCode: sale.authorizationCode,
    dateTime: op.at,
    returnCode: '00',
    returnMessage: CODES['00'],
    links: links(sale),
  };
}

/** The answer to `POST /v1/transactions/{tid}/refunds`. */
export function refundAnswer(sale: Sale, op: Operation): Record<string, unknown> {
  return {
    refundId: op.refundId,
    tid: sale.tid,
    nsu: op.nsu,
    refundDateTime: op.at,
    cancelId: op.refundId,
    returnCode: '359',
    returnMessage: CODES['359'],
    links: links(sale),
  };
}

function refundList(sale: Sale) {
  return sale.operations
    .filter((o) => o.kind === 'refund')
    .map((o) => ({ refundId: o.refundId, refundDateTime: o.at, cancelId: o.refundId, status: 'Done', amount: o.amount }));
}

/** The answer to `GET /v1/transactions/{tid}` (and `?reference=`). */
export function transactionView(sale: Sale, now: string): Record<string, unknown> {
  const captureOp = sale.operations.find((o) => o.kind === 'capture');
  const refunds = refundList(sale);
  return {
    requestDateTime: now,
    authorization: {
      dateTime: sale.operations[0].at,
      returnCode: sale.returnCode,
      returnMessage: message(sale.returnCode),
      affiliation: sale.pv,
      status: AUTH_STATUS[sale.status],
      reference: sale.reference,
      tid: sale.tid,
      nsu: sale.nsu,
      ...(sale.returnCode === '00' ? { authorizationCode: sale.authorizationCode } : {}),
      kind: sale.kind,
      amount: sale.amount,
      installments: sale.installments,
      ...(sale.holder ? { cardHolderName: sale.holder } : {}),
      cardBin: sale.bin,
      last4: sale.last4,
      origin: 1,
      subscription: sale.subscription,
      brand: brand(sale),
    },
    ...(captureOp ? { capture: { dateTime: captureOp.at, nsu: captureOp.nsu, amount: captureOp.amount } } : {}),
    ...(refunds.length ? { refunds } : {}),
    links: links(sale),
  };
}

/** The answer to `GET /v1/transactions/{tid}/refunds`. */
export function refundsView(sale: Sale): Record<string, unknown> {
  return { refunds: refundList(sale), links: links(sale) };
}

/** `GET /__sim/ledger`. */
export function ledgerView(sales: Sale[]): { sales: unknown[] } {
  return {
    sales: sales.map((s) => ({
      tid: s.tid,
      pv: s.pv,
      reference: s.reference,
      nsu: s.nsu,
      amount: s.amount,
      capture: s.capture,
      status: s.status,
      capturedAmount: s.capturedAmount,
      refundedAmount: s.refundedAmount,
      maskedCard: `${s.bin}******${s.last4}`,
      operations: s.operations.map((o) => ({ kind: o.kind, amount: o.amount, at: o.at, ...(o.refundId ? { refundId: o.refundId } : {}) })),
    })),
  };
}
