import { DomainError } from './errors';
import { ErrorCodes } from './error-codes';

/** Billing / customer object (docs/merchants/sales.md `billing`). All optional strings. */
export interface Billing {
  customerIdentity?: string;
  name?: string;
  address?: string;
  address2?: string;
  city?: string;
  state?: string;
  postalCode?: string;
  country?: string;
  phone?: string;
  email?: string;
}

/** The clear card fields, only ever on the wire inside a JWE sealed for the tokenizer. */
export interface ClearCard {
  cardNumber: string;
  cardHolder: string;
  cardExpirationDate: string; // YYYYMM
  cardSecurityCode?: string;
}

/** token.add request: the card travels sealed (JWE dir + A256GCM) so Redis holds only ciphertext. */
export interface TokenAddRequest {
  merchantId: string;
  sealedCard: string;
  flag?: string;
  billing?: Billing;
}

export interface TokenRetrieveRequest {
  merchantId: string;
  token: string;
}

/** Masked token view; the API renders it as the TokenResponse of docs/merchants/tokens.md. */
export interface TokenView {
  token: string;
  /** The masked card number, first 6 + '******' + last 4 (the wire's `BIN` field). */
  maskedNumber: string;
  /**
   * The same value under the field's previous name. A tokenizer sends both and an api reads either,
   * so an api and a tokenizer one release apart (a rolling deploy) still agree; drop it next release.
   */
  bin?: string;
  holder: string;
  expMonth: number;
  expYear: number;
  brand: string;
  createdAt: number; // unix seconds
  billing: Billing | null;
}

/** The masked number of a token view, from a tokenizer of this release or of the previous one. */
export function maskedNumberOf(view: Pick<TokenView, 'maskedNumber' | 'bin'>): string {
  return view.maskedNumber ?? view.bin;
}

/**
 * A token's non-secret facts as Postgres holds them: the clear columns of the vault row, and the
 * api's projection of them (token_facts). Never the number, the security code or a key.
 */
export interface TokenFactsRow {
  token: string;
  masked: string;
  brand: string;
  holder: string;
  exp_year: number;
  exp_month: number;
  billing: Billing | null;
  created_at: Date;
}

/** The view of a token's facts; the masked number goes under both its names (see TokenView.bin). */
export function tokenViewOf(row: TokenFactsRow): TokenView {
  return {
    token: row.token,
    maskedNumber: row.masked,
    bin: row.masked,
    holder: row.holder,
    expYear: row.exp_year,
    expMonth: row.exp_month,
    brand: row.brand,
    createdAt: Math.floor(new Date(row.created_at).getTime() / 1000),
    billing: row.billing,
  };
}

/** The one answer to a token this merchant does not have: unknown, or another merchant's. */
export function tokenNotFound(parameter: string): DomainError {
  return new DomainError('not_found', ErrorCodes.TokenNotFound, 'Token not found.', parameter);
}
