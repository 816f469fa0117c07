import { DomainError, ErrorCodes, FieldProblem, PaymentMethod, SaleInput, SplitEntryInput } from '@app/contracts';
import { validateCard } from '@app/card';
import { isObject, Json, JsonObject, optionalBool, optionalInt, optionalObject, optionalString, requiredInt, requiredObject, requiredString } from '../envelope/scalars';
import { parseBilling } from '../tokens/token-request.parser';

const TOKEN = /^[0-9a-fA-F]{64}$/;
// Any numeric text (sign, exponent, many decimals): its range and precision are the split
// engine's to judge, with their SPLIT_PERCENTAGE_* codes.
const NUMERIC = /^[+-]?(?:\d{1,20}(?:\.\d{0,40})?|\.\d{1,40})(?:[eE][+-]?\d{1,3})?$/;
const INT32_MAX = 2_147_483_647;

/**
 * WIRE.md 4.1 and the seed's field table: `sale` and `authorize` share this body. Every field
 * problem is collected, so one 400 lists them all (`errors[]`), the first as the headline.
 * Amounts are integer cents; split percentages stay decimal text (never a float).
 */
export function parseSale(op: JsonObject, knownAcquirers: readonly number[]): SaleInput {
  const problems: FieldProblem[] = [];
  const check = <T>(fn: () => T): T | undefined => {
    try {
      return fn();
    } catch (e) {
      if (!(e instanceof DomainError)) throw e;
      problems.push(...(e.problems.length ? e.problems : [{ code: e.code, parameter: e.parameter ?? '', message: e.message }]));
      return undefined;
    }
  };

  const order = requiredObject(op, 'order', 'order');
  const payment = requiredObject(op, 'payment', 'payment');
  const reference = check(() => requiredString(order, 'reference', 'order.reference', { max: 64 }));
  const totalAmount = check(() => requiredInt(order, 'totalAmount', 'order.totalAmount', 1));

  const acquirer = check(() => requiredInt(payment, 'acquirer', 'payment.acquirer', 1, 9999));
  if (acquirer !== undefined && !knownAcquirers.includes(acquirer)) problems.push(invalid('payment.acquirer', 'payment.acquirer is not a known acquirer code.'));
  const method = check(() => requiredInt(payment, 'method', 'payment.method', 1, 4)) as PaymentMethod | undefined;
  const numberOfPayments = check(() => optionalInt(payment, 'numberOfPayments', 'payment.numberOfPayments', 1, 12)) ?? 1;
  if (method !== undefined) {
    if ((method === 1 || method === 4) && numberOfPayments !== 1) problems.push(invalid('payment.numberOfPayments', 'payment.numberOfPayments must be 1 for methods 1 (credit) and 4 (debit).'));
    if ((method === 2 || method === 3) && numberOfPayments < 2) problems.push(invalid('payment.numberOfPayments', 'payment.numberOfPayments must be from 2 to 12 for instalment methods 2 and 3.'));
  }
  const amount = check(() => requiredInt(payment, 'amount', 'payment.amount', 1));
  if (amount !== undefined && totalAmount !== undefined && amount !== totalAmount) problems.push(invalid('payment.amount', 'payment.amount must equal order.totalAmount.'));
  const currency = check(() => requiredString(payment, 'currency', 'payment.currency', { pattern: /^\d{3}$/, patternHint: 'must be a three-digit ISO 4217 code such as 986' }));
  const country = check(() => requiredString(payment, 'country', 'payment.country', { pattern: /^[A-Za-z]{3}$/, patternHint: 'must be a three-letter country code such as BRA' }));
  const groupNumber = check(() => optionalString(payment, 'groupNumber', 'payment.groupNumber', { max: 16, pattern: /^\d+$/, patternHint: 'must contain digits only' }));
  const departureTax = check(() => optionalInt(payment, 'departureTax', 'payment.departureTax', 0));
  const softDescriptor = check(() => optionalString(payment, 'softDescriptor', 'payment.softDescriptor', { max: 22, pattern: /^[\x20-\x7e]*$/, patternHint: 'must be printable text' }));
  const flag = check(() => optionalString(payment, 'flag', 'payment.flag', { max: 32 }));
  const saveCreditCard = check(() => optionalBool(payment, 'saveCreditCard', 'payment.saveCreditCard')) ?? false;
  const generateToken = check(() => optionalBool(payment, 'generateToken', 'payment.generateToken')) ?? false;

  const cardPart = check(() => parseCardOrToken(payment, flag));
  const split = check(() => parseSplit(payment));
  const billing = check(() => parseBilling(op));
  const urlReturn = check(() => parseUrlReturn(op));
  const fraud = check(() => optionalBool(op, 'fraud', 'fraud')) ?? false;

  if (problems.length) throw DomainError.fields(problems);
  return {
    order: { reference: reference!, totalAmount: totalAmount! },
    payment: {
      acquirer: acquirer!, method: method!, amount: amount!, currency: currency!, country: country!.toUpperCase(), numberOfPayments,
      groupNumber, flag, softDescriptor, departureTax, saveCreditCard, generateToken, split, ...cardPart!,
    },
    billing,
    urlReturn,
    fraud,
  };
}

function invalid(parameter: string, message: string): FieldProblem {
  return { code: ErrorCodes.InvalidField, parameter, message };
}

function parseCardOrToken(payment: JsonObject, flag: string | undefined): Pick<SaleInput['payment'], 'card' | 'tokenCard' | 'cardSecurityCode'> {
  const tokenKey = payment.tokenCard !== undefined ? 'tokenCard' : payment.cardToken !== undefined ? 'cardToken' : undefined;
  const cardSecurityCode = optionalString(payment, 'cardSecurityCode', 'payment.cardSecurityCode', { pattern: /^\d{3,4}$/, patternHint: 'must be 3 or 4 digits' });
  if (tokenKey) {
    for (const extra of ['cardNumber', 'cardHolder', 'cardExpirationDate']) {
      if (payment[extra] !== undefined) throw DomainError.validation(ErrorCodes.InvalidField, `payment.${extra}`, `payment.${extra} must be absent when payment.${tokenKey} is given.`);
    }
    const token = requiredString(payment, tokenKey, `payment.${tokenKey}`);
    if (!TOKEN.test(token)) throw DomainError.validation(ErrorCodes.InvalidField, `payment.${tokenKey}`, `payment.${tokenKey} must be a token of 64 hexadecimal characters.`);
    return { tokenCard: token.toLowerCase(), cardSecurityCode };
  }
  const card = {
    cardNumber: requiredString(payment, 'cardNumber', 'payment.cardNumber', { max: 19, pattern: /^\d+$/, patternHint: 'must contain digits only' }),
    cardHolder: requiredString(payment, 'cardHolder', 'payment.cardHolder', { max: 64 }),
    cardExpirationDate: requiredString(payment, 'cardExpirationDate', 'payment.cardExpirationDate', { pattern: /^\d{6}$/, patternHint: 'must be 6 digits in the form YYYYMM' }),
    cardSecurityCode,
  };
  const checked = validateCard({ ...card, flag });
  if (!checked.ok) {
    const p = checked.error;
    const parameter = p.parameter === 'flag' ? 'payment.flag' : `payment.${p.parameter}`;
    throw DomainError.validation(p.code, parameter, p.message.replace(new RegExp(`^${p.parameter}\\b`), parameter));
  }
  return { card };
}

function parseUrlReturn(op: JsonObject): string | undefined {
  const raw = optionalString(op, 'urlReturn', 'urlReturn', { max: 2048 });
  if (raw === undefined) return undefined;
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw DomainError.validation(ErrorCodes.InvalidField, 'urlReturn', 'urlReturn must be an absolute http or https URL.');
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') throw DomainError.validation(ErrorCodes.InvalidField, 'urlReturn', 'urlReturn must be an http or https URL.');
  if (url.username || url.password) throw DomainError.validation(ErrorCodes.InvalidField, 'urlReturn', 'urlReturn must not carry credentials.');
  return url.toString();
}

/**
 * Types only: numbers, booleans and text where they belong. Every money rule of SPLIT.md 3
 * (a missing recipient or value, ranges, precision, sums) is the split engine's, so each problem
 * gets its stable SPLIT_* code.
 */
function parseSplit(payment: JsonObject): SplitEntryInput[] | undefined {
  const raw = payment.split;
  if (raw === undefined || raw === null) return undefined;
  if (!Array.isArray(raw)) throw DomainError.validation(ErrorCodes.InvalidField, 'payment.split', 'payment.split must be an array of split entries.');
  // A bound on the work before the engine's own (configurable) entry limit.
  if (raw.length > 100) throw DomainError.validation(ErrorCodes.InvalidField, 'payment.split', 'payment.split may have at most 100 entries.');
  const problems: FieldProblem[] = [];
  const entries = raw.map((entry: Json, i: number) => {
    const at = `payment.split[${i}]`;
    try {
      if (!isObject(entry)) throw DomainError.validation(ErrorCodes.InvalidField, at, `${at} must be an object.`);
      const out: SplitEntryInput = {
        recipient: optionalString(entry, 'recipient', `${at}.recipient`, { max: 64 }),
        liable: optionalBool(entry, 'liable', `${at}.liable`) ?? true,
        chargeProcessingFee: optionalBool(entry, 'charge_processing_fee', `${at}.charge_processing_fee`) ?? false,
        chargeRecipientProcessingFee: optionalBool(entry, 'charge_recipient_processing_fee', `${at}.charge_recipient_processing_fee`) ?? false,
        isGrossAmount: optionalBool(entry, 'is_gross_amount', `${at}.is_gross_amount`) ?? false,
      };
      if (present(entry.percentage)) out.percentage = percentageText(entry.percentage, `${at}.percentage`);
      if (present(entry.amount)) out.amount = optionalInt(entry, 'amount', `${at}.amount`, Number.MIN_SAFE_INTEGER);
      return out;
    } catch (e) {
      if (!(e instanceof DomainError)) throw e;
      problems.push(...e.problems);
      return undefined;
    }
  });
  if (problems.length) throw DomainError.fields(problems);
  return entries as SplitEntryInput[];
}

const present = (v: Json | undefined) => v !== undefined && v !== null && v !== '';

/** A percentage as decimal text: "12.5" stays "12.5"; a JSON number is read by its shortest decimal form. */
function percentageText(v: Json, path: string): string {
  const text = typeof v === 'number' && Number.isFinite(v) ? String(v) : typeof v === 'string' ? v.trim() : '';
  if (!NUMERIC.test(text)) throw DomainError.validation(ErrorCodes.InvalidField, path, `${path} must be a number from 1 to 100 with at most 2 decimals.`);
  return text;
}
