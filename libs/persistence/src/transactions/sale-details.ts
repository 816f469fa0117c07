import type { RebillChargeDetails, SaleDetails, SaleTerms } from '@app/contracts';

/**
 * The one mapping of the `transactions.details` record, a JSON column: what the api writes and
 * every reader's typed value. Settlement's terms, the acquirer's soft descriptor and a rebill
 * charge's cycle are all read through saleDetailsOf, so the record's shape has one home.
 */

/** The record to store for `details` (undefined fields are left out). */
export function saleDetailsJson(details: SaleDetails): string {
  return JSON.stringify(details);
}

/** The typed details of a stored record; a field of another type than its own (never written so) is left out. */
export function saleDetailsOf(stored: unknown): SaleDetails {
  if (!isObject(stored)) return {};
  const out: SaleDetails = {};
  if (typeof stored.softDescriptor === 'string') out.softDescriptor = stored.softDescriptor;
  if (typeof stored.groupNumber === 'string') out.groupNumber = stored.groupNumber;
  if (typeof stored.departureTax === 'number') out.departureTax = stored.departureTax;
  if (isObject(stored.billing)) out.billing = stored.billing;
  if (typeof stored.fraud === 'boolean') out.fraud = stored.fraud;
  // The terms were computed and checked by the api when it accepted the sale, and are stored whole.
  if (isObject(stored.terms)) out.terms = stored.terms as unknown as SaleTerms;
  const rebill = rebillChargeOf(stored.rebill);
  if (rebill) out.rebill = rebill;
  return out;
}

function rebillChargeOf(r: unknown): RebillChargeDetails | undefined {
  if (!isObject(r) || typeof r.id !== 'string' || typeof r.cycle !== 'number' || typeof r.attempt !== 'number') return undefined;
  return { id: r.id, cycle: r.cycle, attempt: r.attempt };
}

function isObject(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}
