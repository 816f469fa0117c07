/**
 * The checks e.Rede makes on `POST /v1/transactions`, in a fixed order: the first failing one
 * answers (400 with its returnCode). The card number and security code are read here and never
 * leave: the result carries only what a sale keeps.
 */
import { cardFacts, CardFacts } from './cards';
import { Code } from './codes';

export interface CreateRequest {
  capture: boolean;
  kind: 'credit' | 'debit';
  reference: string;
  amount: number;
  installments: number;
  subscription: boolean;
  card: CardFacts;
  holder?: string;
  expired: boolean;
}

type Body = Record<string, unknown>;
type Check = (b: Body, out: Partial<CreateRequest>) => Code | undefined;

const isBlank = (v: unknown) => v === undefined || v === null || v === '';
const digits = (v: unknown) => (typeof v === 'number' && Number.isInteger(v) ? String(v) : typeof v === 'string' ? v : undefined);

/** e.Rede takes booleans as JSON booleans or as the strings "true"/"false" (the PHP SDK's way). */
function bool(v: unknown): boolean | undefined {
  if (v === true || v === 'true') return true;
  if (v === false || v === 'false') return false;
  return undefined;
}

const checkCapture: Check = (b, out) => {
  const c = isBlank(b.capture) ? true : bool(b.capture);
  if (c === undefined) return '3119';
  out.capture = c;
};

const checkKind: Check = (b, out) => {
  const k = isBlank(b.kind) ? 'credit' : b.kind;
  if (k !== 'credit' && k !== 'debit') return '76';
  if (k === 'debit' && out.capture === false) return '158';
  out.kind = k;
};

const checkReference: Check = (b, out) => {
  if (isBlank(b.reference)) return '41';
  const r = digits(b.reference);
  if (r === undefined || !/^[\w.-]+$/.test(r)) return '40';
  if (r.length > 16) return '39';
  out.reference = r;
};

const checkAmount: Check = (b, out) => {
  if (isBlank(b.amount)) return '73';
  const a = typeof b.amount === 'string' && /^\d+$/.test(b.amount) ? Number(b.amount) : b.amount;
  if (typeof a !== 'number' || !Number.isInteger(a) || a < 0) return '71';
  if (a > 9_999_999_999) return '70';
  out.amount = a;
};

const checkInstallments: Check = (b, out) => {
  if (isBlank(b.installments)) return void (out.installments = 1);
  const n = Number(digits(b.installments));
  if (!Number.isInteger(n) || n < 1) return '50';
  if (n > 12) return '151';
  if (n > 1 && out.kind === 'debit') return '54';
  out.installments = n;
};

const checkHolder: Check = (b, out) => {
  if (isBlank(b.cardHolderName)) return;
  if (typeof b.cardHolderName !== 'string') return '59';
  if (b.cardHolderName.length > 30) return '55';
  out.holder = b.cardHolderName;
};

const checkCard: Check = (b, out) => {
  if (isBlank(b.cardNumber)) return '38';
  const pan = digits(b.cardNumber);
  if (pan === undefined || !/^\d+$/.test(pan)) return '37';
  if (pan.length < 13 || pan.length > 19) return '36';
  out.card = cardFacts(pan);
};

const checkExpiry: Check = (b, out) => {
  if (isBlank(b.expirationMonth)) return '35';
  const m = digits(b.expirationMonth);
  if (m === undefined || !/^\d{1,2}$/.test(m) || +m < 1 || +m > 12) return '33';
  if (isBlank(b.expirationYear)) return '3';
  const y = digits(b.expirationYear);
  if (y === undefined || !/^\d+$/.test(y)) return '2';
  if (y.length !== 2 && y.length !== 4) return '1';
  const year = y.length === 2 ? 2000 + Number(y) : Number(y);
  const now = new Date();
  out.expired = year < now.getUTCFullYear() || (year === now.getUTCFullYear() && +m < now.getUTCMonth() + 1);
};

const checkSecurityCode: Check = (b) => {
  if (isBlank(b.securityCode)) return;
  const s = digits(b.securityCode);
  if (s === undefined || !/^\d+$/.test(s)) return '16';
  if (s.length < 3 || s.length > 4) return '15';
};

const checkRest: Check = (b, out) => {
  if (!isBlank(b.softDescriptor) && (typeof b.softDescriptor !== 'string' || b.softDescriptor.length > 18)) return '31';
  const sub = isBlank(b.subscription) ? false : bool(b.subscription);
  if (sub === undefined) return '61';
  out.subscription = sub;
};

const CHECKS: Check[] = [
  checkCapture,
  checkKind,
  checkReference,
  checkAmount,
  checkInstallments,
  checkHolder,
  checkCard,
  checkExpiry,
  checkSecurityCode,
  checkRest,
];

export function validateCreate(body: unknown): { error: Code } | { ok: CreateRequest } {
  const b = (body && typeof body === 'object' && !Array.isArray(body) ? body : {}) as Body;
  const out: Partial<CreateRequest> = {};
  for (const check of CHECKS) {
    const error = check(b, out);
    if (error) return { error };
  }
  return { ok: out as CreateRequest };
}

/** A capture's or refund's `amount`: absent → undefined; malformed → its code. */
export function followUpAmount(body: unknown): { error: Code } | { ok: number | undefined } {
  const a = (body as { amount?: unknown } | undefined)?.amount;
  if (isBlank(a)) return { ok: undefined };
  if (typeof a !== 'number' || !Number.isInteger(a) || a <= 0) return { error: '71' };
  if (a > 9_999_999_999) return { error: '70' };
  return { ok: a };
}
