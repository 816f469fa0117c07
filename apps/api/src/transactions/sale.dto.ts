import { ErrorCodes, FieldProblem, PaymentMethod, SaleInput, SplitEntryInput } from '@app/contracts';
import { BillingDto, billingOf } from '../envelope/billing.dto';
import { CardExpirationDate, CardHolder, CardNumber, CardSecurityCode, Flag, tokenKeyOf } from '../envelope/card-fields';
import { validated } from '../envelope/validate';
import { Bool, boolOf, Check, FieldCheck, Int, intOf, invalid, Nested, NestedList, Text, textOf } from '../envelope/wire-fields';

const TOKEN = /^[0-9a-fA-F]{64}$/;
// Any numeric text (sign, exponent, many decimals): its range and precision are the split
// engine's to judge, with their SPLIT_PERCENTAGE_* codes.
const NUMERIC = /^[+-]?(?:\d{1,20}(?:\.\d{0,40})?|\.\d{1,40})(?:[eE][+-]?\d{1,3})?$/;
/** Every acquirer code is served (by the sandbox acquirer outside production). */
export const ACQUIRER_CODES = { min: 1, max: 999 };
export const MAX_SPLIT_ENTRIES = 100;

export const num = (v: unknown): number | undefined => {
  const n = intOf(v);
  return typeof n === 'number' ? n : undefined;
};

export class OrderDto {
  @Text({ required: true, max: 64, example: 'A-1001', description: "The merchant's own reference; report can find the latest sale by it." })
  reference!: string;

  @Int({ required: true, min: 1, example: 150000, description: 'Integer cents.' })
  totalAmount!: number;
}

/** Instalments: one for methods 1 (credit) and 4 (debit), 2 to 12 for methods 2 and 3. */
const instalmentsFit: FieldCheck = (v, owner) => {
  const method = num(owner.method);
  const n = num(v)!;
  if ((method === 1 || method === 4) && n !== 1) return invalid('must be 1 for methods 1 (credit) and 4 (debit)');
  if ((method === 2 || method === 3) && n < 2) return invalid('must be from 2 to 12 for instalment methods 2 and 3');
  return null;
};

const tokenCheck: FieldCheck = (v) => {
  const text = textOf(v);
  return text !== undefined && TOKEN.test(text) ? null : invalid('must be a token of 64 hexadecimal characters');
};

export class SplitEntryDto {
  @Text({ max: 64, example: '0b6f5c3e-6a4d-4f0e-9a1b-2c3d4e5f6a7b', description: 'An approved recipient of this merchant.' })
  recipient?: string;

  @Check(
    {
      oneOf: [{ type: 'number' }, { type: 'string', pattern: NUMERIC.source }],
      description: 'Percent of the amount, 1 to 100 with at most 2 decimals; or give amount.',
    },
    (v) => {
      const text = typeof v === 'number' && Number.isFinite(v) ? String(v) : typeof v === 'string' ? v.trim() : '';
      return NUMERIC.test(text) ? null : invalid('must be a number from 1 to 100 with at most 2 decimals');
    },
    { example: '33.33' },
  )
  percentage?: string | number;

  @Int({ min: Number.MIN_SAFE_INTEGER, example: 1000, description: 'Integer cents; or give percentage.' })
  amount?: number;

  @Bool({ description: 'Default true: the recipient bears chargebacks pro rata.' })
  liable?: boolean;

  @Bool({ description: 'Default false.' })
  charge_processing_fee?: boolean;

  @Bool({ description: 'Default false.' })
  charge_recipient_processing_fee?: boolean;

  @Bool({ description: 'Default false.' })
  is_gross_amount?: boolean;
}

/** The payment fields a sale and a rebill's paymentCreditCard share. */
export class CardPaymentDto {
  @Int({ required: true, ...ACQUIRER_CODES, example: 26 })
  acquirer!: number;

  @Int({ required: true, min: 1, example: 150000, description: 'Integer cents; must equal order.totalAmount.' })
  amount!: number;

  @Text({ required: true, pattern: /^\d{3}$/, hint: 'must be a three-digit ISO 4217 code such as 986', example: '986' })
  currency!: string;

  @Text({ required: true, pattern: /^[A-Za-z]{3}$/, hint: 'must be a three-letter country code such as BRA', example: 'BRA' })
  country!: string;

  @Int({
    min: 1,
    max: 12,
    example: 1,
    also: instalmentsFit,
    required: (owner) => [2, 3].includes(num(owner.method) ?? 0),
    description: 'The number of instalments (default 1).',
  })
  numberOfPayments?: number;

  @Text({ max: 16, pattern: /^\d+$/, hint: 'must contain digits only', example: '0' })
  groupNumber?: string;

  @Flag()
  flag?: string;

  @Bool({ description: 'Vault the card and return its token (default false).' })
  saveCreditCard?: boolean;

  @Bool({ description: 'Same as saveCreditCard.' })
  generateToken?: boolean;

  @Check({ type: 'string', pattern: TOKEN.source, description: 'A token of this merchant instead of the card fields.' }, tokenCheck)
  tokenCard?: string;

  @Check({ type: 'string', pattern: TOKEN.source, description: 'Another name for tokenCard.' }, tokenCheck)
  cardToken?: string;

  @CardNumber({ orToken: true })
  cardNumber?: string;

  @CardHolder({ orToken: true })
  cardHolder?: string;

  @CardExpirationDate({ orToken: true })
  cardExpirationDate?: string;

  @CardSecurityCode()
  cardSecurityCode?: string;

  @NestedList(() => SplitEntryDto, { maxItems: MAX_SPLIT_ENTRIES, what: 'split entries' })
  split?: SplitEntryDto[];
}

export class PaymentDto extends CardPaymentDto {
  @Int({ required: true, min: 1, max: 4, example: 1, description: '1 credit, 2 merchant instalments, 3 issuer instalments, 4 debit.' })
  method!: PaymentMethod;

  @Int({
    min: 0,
    example: 0,
    description: 'Airport departure tax in integer cents, at most the amount.',
    also: (v, owner) => {
      const amount = num(owner.amount);
      return amount !== undefined && num(v)! > amount ? invalid('must not be more than payment.amount') : null;
    },
  })
  departureTax?: number;

  @Text({ max: 22, pattern: /^[\x20-\x7e]*$/, hint: 'must be printable text', example: 'SHOP' })
  softDescriptor?: string;
}

export function checkUrlReturn(v: unknown) {
  const raw = textOf(v);
  if (raw === undefined) return invalid('must be a string');
  if (raw.length > 2048) return invalid('must be at most 2048 characters');
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    return invalid('must be an absolute http or https URL');
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') return invalid('must be an http or https URL');
  if (url.username || url.password) return invalid('must not carry credentials');
  return null;
}

/** `sale` and `authorize` share this body. */
/** Where the gateway posts outcomes; null or empty is the same as absent. */
export const UrlReturn = () =>
  Check({ type: 'string', format: 'uri', maxLength: 2048, description: 'Where the gateway posts the outcome (signed).' }, checkUrlReturn, {
    example: 'https://merchant.example/listener',
  });

/** A validated urlReturn, normalised; undefined when absent. */
export const urlReturnOf = (v: unknown): string | undefined => (optionalText(v) === undefined ? undefined : new URL(textOf(v)!).toString());

export class SaleDto {
  @Nested(() => OrderDto, { required: true })
  order!: OrderDto;

  @Nested(() => PaymentDto, { required: true })
  payment!: PaymentDto;

  @Nested(() => BillingDto)
  billing?: BillingDto;

  @UrlReturn()
  urlReturn?: string;

  @Bool()
  fraud?: boolean;
}

/** The cross-object rule of a sale and a rebill: the payment's amount is the order's total. */
export function amountMatchesTotal(order: { totalAmount?: unknown } | undefined, payment: { amount?: unknown } | undefined, at: string) {
  const total = num(order?.totalAmount);
  const amount = num(payment?.amount);
  const problems: FieldProblem[] = [];
  if (total !== undefined && amount !== undefined && total !== amount) {
    problems.push({ code: ErrorCodes.InvalidField, parameter: `${at}.amount`, message: `${at}.amount must equal order.totalAmount.` });
  }
  return problems;
}

/**
 * A sale or authorize body as the gateway takes it. Every problem is listed in one 400. Amounts
 * are integer cents; split percentages stay decimal text (never a float).
 */
export function parseSale(body: Record<string, unknown>): SaleInput {
  const dto = validated(SaleDto, body, '', (sale) => amountMatchesTotal(sale.order, sale.payment, 'payment'));
  const payment = dto.payment;
  return {
    order: { reference: textOf(dto.order.reference)!, totalAmount: num(dto.order.totalAmount)! },
    payment: {
      acquirer: num(payment.acquirer)!,
      method: num(payment.method)! as PaymentMethod,
      amount: num(payment.amount)!,
      currency: textOf(payment.currency)!,
      country: textOf(payment.country)!.toUpperCase(),
      numberOfPayments: optionalInt(payment.numberOfPayments) ?? 1,
      groupNumber: optionalText(payment.groupNumber),
      flag: optionalText(payment.flag),
      softDescriptor: optionalText(payment.softDescriptor),
      departureTax: optionalInt(payment.departureTax),
      saveCreditCard: boolOf(payment.saveCreditCard) ?? false,
      generateToken: boolOf(payment.generateToken) ?? false,
      split: payment.split?.map(splitEntryOf),
      ...cardOrTokenOf(payment),
    },
    billing: billingOf(dto.billing),
    urlReturn: urlReturnOf(dto.urlReturn),
    fraud: boolOf(dto.fraud) ?? false,
  };
}

export const optionalText = (v: unknown) => (v === undefined || v === null || v === '' ? undefined : textOf(v));
export const optionalInt = (v: unknown) => (v === undefined || v === null || v === '' ? undefined : num(v));

/** The inline card, or the token (and the security code sent with it), of a validated payment. */
export function cardOrTokenOf(payment: CardPaymentDto): Pick<SaleInput['payment'], 'card' | 'tokenCard' | 'cardSecurityCode'> {
  const tokenKey = tokenKeyOf(payment as unknown as Record<string, unknown>);
  if (!tokenKey) {
    return {
      card: {
        cardNumber: textOf(payment.cardNumber)!,
        cardHolder: textOf(payment.cardHolder)!,
        cardExpirationDate: textOf(payment.cardExpirationDate)!,
        cardSecurityCode: optionalText(payment.cardSecurityCode),
      },
    };
  }
  const code = optionalText(payment.cardSecurityCode);
  return { tokenCard: String(payment[tokenKey]).toLowerCase(), ...(code ? { cardSecurityCode: code } : {}) };
}

/**
 * "1e1" as "10", "1.25E-1" as "0.125": the decimal text the split engine reads, shifted exactly
 * (a JSON number written with an exponent reaches us as its text). Other text is left as it is.
 */
export function withoutExponent(text: string): string {
  const m = /^([+-]?)(\d*)(?:\.(\d*))?[eE]([+-]?\d{1,3})$/.exec(text);
  if (!m || (m[2] === '' && !m[3])) return text;
  const [, sign, whole, fraction = '', exp] = m;
  const digits = whole + fraction;
  const point = whole.length + Number(exp);
  const padded = point <= 0 ? '0'.repeat(1 - point) + digits : point > digits.length ? digits + '0'.repeat(point - digits.length) : digits;
  const at = Math.max(point, 1);
  const intPart = padded.slice(0, at).replace(/^0+(?=\d)/, '');
  const fracPart = padded.slice(at).replace(/0+$/, '');
  return `${sign === '-' ? '-' : ''}${intPart}${fracPart ? `.${fracPart}` : ''}`;
}

export function splitEntryOf(e: SplitEntryDto): SplitEntryInput {
  const given = (v: unknown) => v !== undefined && v !== null && v !== '';
  const out: SplitEntryInput = {
    recipient: given(e.recipient) ? textOf(e.recipient) : undefined,
    liable: boolOf(e.liable) ?? true,
    chargeProcessingFee: boolOf(e.charge_processing_fee) ?? false,
    chargeRecipientProcessingFee: boolOf(e.charge_recipient_processing_fee) ?? false,
    isGrossAmount: boolOf(e.is_gross_amount) ?? false,
  };
  if (given(e.percentage))
    out.percentage = withoutExponent(typeof e.percentage === 'number' ? String(e.percentage) : String(e.percentage).trim());
  if (given(e.amount)) out.amount = num(e.amount);
  return out;
}
