/** docs/merchants/split.md 3: one stable code per problem, listed in `errors[]` of a 400. */
export const SplitErrorCodes = {
  RecipientRequired: 'SPLIT_RECIPIENT_REQUIRED',
  RecipientNotFound: 'SPLIT_RECIPIENT_NOT_FOUND',
  RecipientNotActive: 'SPLIT_RECIPIENT_NOT_ACTIVE',
  RecipientIsMerchant: 'SPLIT_RECIPIENT_IS_MERCHANT',
  ValueRequired: 'SPLIT_VALUE_REQUIRED',
  ValueAmbiguous: 'SPLIT_VALUE_AMBIGUOUS',
  PercentageOutOfRange: 'SPLIT_PERCENTAGE_OUT_OF_RANGE',
  PercentagePrecision: 'SPLIT_PERCENTAGE_PRECISION',
  AmountOutOfRange: 'SPLIT_AMOUNT_OUT_OF_RANGE',
  Empty: 'SPLIT_EMPTY',
  TooManyEntries: 'SPLIT_TOO_MANY_ENTRIES',
  RecipientDuplicated: 'SPLIT_RECIPIENT_DUPLICATED',
  PercentageSumExceeded: 'SPLIT_PERCENTAGE_SUM_EXCEEDED',
  MultipleFullFeePayers: 'SPLIT_MULTIPLE_FULL_FEE_PAYERS',
  FullAndProrataConflict: 'SPLIT_FULL_AND_PRORATA_FEE_CONFLICT',
  FeeExceedsAmount: 'FEE_EXCEEDS_AMOUNT',
  GrossExceeded: 'SPLIT_GROSS_EXCEEDED',
  FeeExceedsShare: 'SPLIT_FEE_EXCEEDS_SHARE',
  MerchantNetNegative: 'SPLIT_MERCHANT_NET_NEGATIVE',
} as const;
export type SplitErrorCode = (typeof SplitErrorCodes)[keyof typeof SplitErrorCodes];

/** docs/merchants/split.md 2: the effective mode of an entry (flags whose precondition fails are ignored). */
export type SplitMode = 'FREE' | 'FULL' | 'PRORATA' | 'NET_AMOUNT';

/** Cents of one party: gross slice, fee share, net (gross − fee). */
export interface PartyShare {
  gross: number;
  fee: number;
  net: number;
}

export interface EntryShare extends PartyShare {
  recipient: string;
  mode: SplitMode;
  liable: boolean;
}

/** The split of one amount: every recipient entry, the merchant's residual, the operator's fee. */
export interface SplitResult {
  gross: number;
  fee: number;
  entries: EntryShare[];
  merchant: PartyShare;
}

/** A fee plan row: `rate` in parts per million of the gross, plus `fixed` cents (docs/merchants/split.md 1). */
export interface FeeRate {
  ratePpm: number;
  fixed: number;
}

export type MethodKind = 'credit' | 'debit';

/**
 * One split entry as the merchant sent it, only type-checked: every money rule (docs/merchants/split.md 3),
 * including a missing recipient or value, is the split engine's, so each has its stable code.
 */
export interface SplitEntryInput {
  recipient?: string;
  liable: boolean;
  chargeProcessingFee: boolean;
  chargeRecipientProcessingFee: boolean;
  isGrossAmount: boolean;
  /** Decimal text as sent ("12.5"); never a float. */
  percentage?: string;
  /** Integer cents as sent (range checked by the engine). */
  amount?: number;
}

/**
 * A sale's terms: what it freezes at acceptance (the fee rate of its method kind and brand, and
 * its split) so settlement computes exactly what the API validated.
 */
export interface SaleTerms {
  kind: MethodKind;
  brand: string;
  fee: FeeRate;
  split?: SplitEntryInput[];
}

/** One payable (or debit) as the report shows it. */
export interface PayableView {
  party: string; // recipient id, or "merchant"
  kind: 'capture' | 'cancel' | 'chargeback';
  instalment: number;
  dueDate: string; // YYYY-MM-DD
  gross: number;
  fee: number;
  net: number;
  status: string;
}
