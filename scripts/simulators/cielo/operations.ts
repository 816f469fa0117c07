/**
 * What Cielo does: authorize (by the card's last digit, as its sandbox), capture once, void in
 * full or in parts. Each function changes the sale record and says what to answer.
 */
import { randomUUID } from 'node:crypto';
import { SimAnswer } from '../faults';
import { saleBody, updateBody } from './answers';
import { SaleBook, SaleRecord } from './sales';
import { CieloError, SaleInput } from './validate';

/** Cielo's sandbox: the card number's last digit decides (9: authorized or time out, fixed per sale). */
const BY_LAST_DIGIT: Record<string, { approved: boolean; code: string; message: string }> = {
  '0': { approved: true, code: '', message: '' },
  '1': { approved: true, code: '', message: '' },
  '4': { approved: true, code: '', message: '' },
  '2': { approved: false, code: '05', message: 'Not Authorized' },
  '3': { approved: false, code: '57', message: 'Expired Card' },
  '5': { approved: false, code: '78', message: 'Blocked Card' },
  '6': { approved: false, code: '99', message: 'Time Out' },
  '7': { approved: false, code: '77', message: 'Canceled Card' },
  '8': { approved: false, code: '70', message: 'Problems with the Credit Card' },
};

export const NOT_CAPTURABLE: CieloError = { Code: 308, Message: 'Transaction not available to capture' };
export const NOT_VOIDABLE: CieloError = { Code: 309, Message: 'Transaction not available to void' };

let counter = 0;
const digits = (n: number, width: number) => String(n % 10 ** width).padStart(width, '0');
const random = (width: number) => digits(Math.floor(Math.random() * 10 ** width), width);

/** A Tid of 20 characters: the local month, day and time, then a running number. */
function newTid(now: number): string {
  const t = new Date(now - 3 * 3_600_000).toISOString();
  counter = (counter + 1) % 1e6;
  return `${t.slice(5, 7)}${t.slice(8, 10)}${t.slice(11, 13)}${t.slice(14, 16)}${t.slice(17, 19)}${random(4)}${digits(counter, 6)}`;
}

function outcome(lastDigit: string, paymentId: string) {
  if (lastDigit !== '9') return BY_LAST_DIGIT[lastDigit];
  const even = parseInt(paymentId.slice(-2), 16) % 2 === 0;
  return even ? BY_LAST_DIGIT['0'] : BY_LAST_DIGIT['6'];
}

/** Above 20 characters or with symbols, Cielo sends its own order id to the authorizer. */
function acquirerOrderId(orderId: string, now: number): string | undefined {
  if (orderId.length <= 20 && /^[A-Za-z0-9]+$/.test(orderId)) return undefined;
  const t = new Date(now - 3 * 3_600_000).toISOString().replace(/\D/g, '').slice(0, 14);
  return `${t}${randomUUID().replace(/-/g, '').slice(0, 6).toUpperCase()}`;
}

export function createSale(book: SaleBook, merchantId: string, input: SaleInput, now: number): SaleRecord {
  const paymentId = randomUUID();
  const rule = outcome(input.card.number.slice(-1), paymentId);
  const captured = rule.approved && input.capture;
  const { number: pan, ...card } = input.card;
  const s: SaleRecord = {
    paymentId,
    merchantId,
    merchantOrderId: input.merchantOrderId,
    acquirerOrderId: acquirerOrderId(input.merchantOrderId, now),
    tid: newTid(now),
    proofOfSale: random(6),
    authorizationCode: rule.approved ? random(6) : undefined,
    amount: input.amount,
    installments: input.installments,
    interest: input.interest,
    captureRequested: input.capture,
    recurrent: input.recurrent,
    softDescriptor: input.softDescriptor,
    serviceTaxAmount: input.serviceTaxAmount,
    customerName: input.customerName,
    card: { ...card, maskedNumber: `${pan.slice(0, 6)}******${pan.slice(-4)}` },
    status: rule.approved ? (captured ? 2 : 1) : 3,
    returnCode: rule.approved ? (captured ? '6' : '4') : rule.code,
    returnMessage: rule.approved ? 'Operation Successful' : rule.message,
    receivedAt: now,
    capturedAmount: captured ? input.amount : 0,
    capturedAt: captured ? now : undefined,
    voidedAmount: 0,
    operations: [{ kind: 'authorize', amount: input.amount, at: new Date(now).toISOString() }],
  };
  if (captured) s.operations.push({ kind: 'capture', amount: input.amount, at: new Date(now).toISOString() });
  book.add(s);
  return s;
}

/** `PUT …/capture[?amount=]`: once, of at most the authorized amount (a partial one releases the rest). */
export function captureSale(s: SaleRecord, amount: number | undefined, base: string, now: number): SimAnswer {
  const value = amount ?? s.amount;
  if (s.status !== 1 || !(value > 0) || value > s.amount) return { status: 400, body: [NOT_CAPTURABLE] };
  s.status = 2;
  s.capturedAmount = value;
  s.capturedAt = now;
  s.operations.push({ kind: 'capture', amount: value, at: new Date(now).toISOString() });
  return { status: 200, body: updateBody(s, base, '6') };
}

/**
 * `PUT …/void[?amount=]`. Authorized (1): the whole authorization only → 10. Captured (2): parts
 * add up; the answer keeps 2 until the captured amount is all voided → 10 (11 when voided on a
 * later day than the capture). Cielo asks for `spacingMs` between two voids of one sale.
 */
export function voidSale(s: SaleRecord, amount: number | undefined, base: string, now: number, spacingMs: number): SimAnswer {
  const open = s.status === 1 ? s.amount : s.status === 2 ? s.capturedAmount - s.voidedAmount : 0;
  const value = amount ?? open;
  const partialOfAuthorization = s.status === 1 && value !== s.amount;
  if (open <= 0 || !(value > 0) || value > open || partialOfAuthorization) return { status: 400, body: [NOT_VOIDABLE] };
  if (s.voidedAt !== undefined && now - s.voidedAt < spacingMs) return { status: 400, body: [NOT_VOIDABLE] };
  s.voidedAmount += value;
  s.voidedAt = now;
  s.operations.push({ kind: 'void', amount: value, at: new Date(now).toISOString() });
  const whole = value === open;
  if (whole) s.status = s.capturedAt !== undefined && dayOf(now) !== dayOf(s.capturedAt) ? 11 : 10;
  return { status: 200, body: updateBody(s, base, whole ? '9' : '0') };
}

const dayOf = (ms: number) => new Date(ms - 3 * 3_600_000).toISOString().slice(0, 10);

export { saleBody };
