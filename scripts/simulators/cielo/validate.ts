/**
 * The checks `POST /1/sales/` makes before it acts, with Cielo's own API error codes and messages
 * (the manual's "API Error Codes" table). Every failed check is listed, in the order Cielo's
 * table has them; a 400 answers the whole list as a JSON array of `{Code, Message}`.
 */
import { bool, lowerKeys, num, obj, str } from './read';

export interface CieloError {
  Code: number;
  Message: string;
}

/** A validated sale request. The card number and security code stay in the request only. */
export interface SaleInput {
  merchantOrderId: string;
  customerName?: string;
  amount: number;
  installments: number;
  interest: string;
  capture: boolean;
  recurrent: boolean;
  softDescriptor?: string;
  serviceTaxAmount: number;
  card: { number: string; holder: string; expirationDate: string; brand: string; cardOnFile?: { Usage?: string; Reason?: string } };
}

export const BRANDS = ['Visa', 'Master', 'Amex', 'Elo', 'Aura', 'JCB', 'Diners', 'Discover', 'Hipercard', 'Hiper'];
const BRAND_BY_KEY = new Map(BRANDS.map((b) => [b.toLowerCase(), b]));

const E = {
  empty: { Code: 184, Message: 'Request could not be empty' },
  paymentType: { Code: 102, Message: 'Payment Type is required' },
  amount: { Code: 108, Message: 'Amount must be greater or equal to zero' },
  holder: { Code: 117, Message: 'Credit Card Holder is required' },
  cardNumber: { Code: 118, Message: 'Credit Card Number is required' },
  payment: { Code: 119, Message: 'At least one Payment is required' },
  customer: { Code: 121, Message: 'Customer is required' },
  orderId: { Code: 122, Message: 'MerchantOrderId is required' },
  installments: { Code: 123, Message: 'Installments must be greater or equal to one' },
  card: { Code: 124, Message: 'Credit Card is Required' },
  expiryRequired: { Code: 125, Message: 'Credit Card Expiration Date is required' },
  expiry: { Code: 126, Message: 'Credit Card Expiration Date is invalid' },
  cardLength: { Code: 128, Message: 'Card Number length exceeded' },
  affiliation: { Code: 129, Message: 'Affiliation not found' },
  securityCode: { Code: 146, Message: 'SecurityCode length exceeded' },
  customerName: { Code: 155, Message: 'Customer Name length exceeded' },
  brandRequired: { Code: 182, Message: 'Brand is required' },
  brand: { Code: 185, Message: 'Brand is not supported by selected provider' },
  cardInvalid: { Code: 213, Message: 'Credit Card Number is invalid' },
} satisfies Record<string, CieloError>;

export function validateSale(body: unknown, malformed: boolean, now: Date): { errors: CieloError[] } | { sale: SaleInput } {
  if (malformed || body === null || typeof body !== 'object' || Array.isArray(body)) return { errors: [E.empty] };
  const b = lowerKeys(body);
  const errors: CieloError[] = [];
  const merchantOrderId = str(b, 'merchantorderid');
  if (!merchantOrderId || merchantOrderId.length > 50) errors.push(E.orderId);
  const customer = obj(b, 'customer');
  if (!customer) errors.push(E.customer);
  const customerName = str(customer, 'name');
  if (customerName && customerName.length > 255) errors.push(E.customerName);
  const payment = obj(b, 'payment');
  if (!payment) return { errors: [...errors, E.payment] };
  const amount = num(payment, 'amount');
  if (amount === undefined || !Number.isInteger(amount) || amount <= 0) errors.push(E.amount);
  const installments = num(payment, 'installments') ?? 1;
  if (!Number.isInteger(installments) || installments < 1) errors.push(E.installments);
  const type = str(payment, 'type');
  if (!type) errors.push(E.paymentType);
  else if (type.toLowerCase() !== 'creditcard') errors.push(E.affiliation);
  const card = readCard(obj(payment, 'creditcard'), now, errors);
  if (errors.length > 0 || !card) return { errors };
  return {
    sale: {
      merchantOrderId: merchantOrderId!,
      customerName,
      amount: amount!,
      installments,
      interest: str(payment, 'interest') ?? 'ByMerchant',
      capture: bool(payment, 'capture'),
      recurrent: bool(payment, 'recurrent'),
      softDescriptor: str(payment, 'softdescriptor'),
      serviceTaxAmount: num(payment, 'servicetaxamount') || 0,
      card,
    },
  };
}

function readCard(card: Record<string, unknown> | undefined, now: Date, errors: CieloError[]): SaleInput['card'] | undefined {
  if (!card) {
    errors.push(E.card);
    return undefined;
  }
  const number = str(card, 'cardnumber');
  if (!number) errors.push(E.cardNumber);
  else if (!/^\d+$/.test(number) || number.length < 12) errors.push(E.cardInvalid);
  else if (number.length > 19) errors.push(E.cardLength);
  const holder = str(card, 'holder');
  if (!holder) errors.push(E.holder);
  const expirationDate = str(card, 'expirationdate');
  if (!expirationDate) errors.push(E.expiryRequired);
  else if (!expiryValid(expirationDate, now)) errors.push(E.expiry);
  const securityCode = str(card, 'securitycode');
  if (securityCode && securityCode.length > 4) errors.push(E.securityCode);
  const brandSent = str(card, 'brand');
  const brand = brandSent ? BRAND_BY_KEY.get(brandSent.toLowerCase()) : undefined;
  if (!brandSent) errors.push(E.brandRequired);
  else if (!brand) errors.push(E.brand);
  if (!number || !holder || !expirationDate || !brand) return undefined;
  const cof = obj(card, 'cardonfile');
  const cardOnFile = cof ? { Usage: str(cof, 'usage'), Reason: str(cof, 'reason') } : undefined;
  return { number, holder, expirationDate, brand, cardOnFile };
}

/** `MM/YYYY`, a real month, not before the current month. */
function expiryValid(text: string, now: Date): boolean {
  const m = /^(\d{2})\/(\d{4})$/.exec(text);
  if (!m) return false;
  const month = Number(m[1]);
  const year = Number(m[2]);
  if (month < 1 || month > 12) return false;
  return year * 12 + month >= now.getUTCFullYear() * 12 + now.getUTCMonth() + 1;
}
