import { maskedNumberOf, RebillInput, SaleTerms, TokenView } from '@app/contracts';
import type { NewRebill, RebillDetails } from '@app/persistence';
import { dueAt, shiftDaysFor } from './schedule';

/** What a new rebill is made of besides the merchant's request: decided by the api as for a sale. */
export interface RebillMaking {
  id: string;
  merchantId: string;
  input: RebillInput;
  /** The vaulted card every charge is made with. */
  token: TokenView;
  /** The payment method of every charge. */
  method: number;
  /** The settlement terms fixed at creation. */
  terms: SaleTerms;
  retryDays: readonly number[];
  /** The time of creation (ms). */
  now: number;
}

/** The last day of the card's expiry month, YYYY-MM-DD. */
export function cardExpiresOn(t: Pick<TokenView, 'expYear' | 'expMonth'>): string {
  return new Date(Date.UTC(t.expYear, t.expMonth, 0)).toISOString().slice(0, 10);
}

/**
 * The rebill as recorded (its schedule and first payment's terms, on the vaulted card), and whether
 * its first cycle is already due at creation, so that it is charged then.
 */
export function planRebill(k: RebillMaking): { rebill: NewRebill; chargeFirst: boolean } {
  const p = k.input.payment;
  const shiftDays = shiftDaysFor(k.input.order.dateStart, k.now);
  const details: RebillDetails = {
    method: k.method,
    groupNumber: p.groupNumber,
    departureTax: p.departureTax,
    billing: k.input.billing,
    fraud: k.input.fraud,
    terms: k.terms,
  };
  const rebill: NewRebill = {
    id: k.id,
    merchantId: k.merchantId,
    reference: k.input.order.reference,
    period: k.input.order.period,
    frequency: k.input.order.frequency,
    dateStart: k.input.order.dateStart,
    dateEnd: k.input.order.dateEnd,
    retryDays: k.retryDays,
    shiftDays,
    acquirer: p.acquirer,
    instalments: p.numberOfPayments,
    currency: p.currency,
    amount: p.amount,
    tokenCard: k.token.token,
    maskedCard: maskedNumberOf(k.token),
    brand: k.token.brand,
    cardExpires: cardExpiresOn(k.token),
    details,
    urlReturn: k.input.urlReturn,
  };
  return { rebill, chargeFirst: dueAt(k.input.order.dateStart, shiftDays).getTime() <= k.now };
}
