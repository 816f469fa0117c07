import type { SaleTerms } from './split';
import type { Billing } from './tokens';

/** A rebill's charge: which rebill (its id upper-case, as on the wire), cycle and dunning attempt it is. */
export interface RebillChargeDetails {
  id: string;
  cycle: number;
  attempt: number;
}

/**
 * What a sale records beside its columns (the `transactions.details` record): what its
 * authorization sends the acquirer, the terms it is settled by and, for a rebill's charge, which
 * charge it is.
 */
export interface SaleDetails {
  softDescriptor?: string;
  groupNumber?: string;
  departureTax?: number;
  billing?: Billing;
  fraud?: boolean;
  terms?: SaleTerms;
  rebill?: RebillChargeDetails;
}
