import { maskedNumberOf, TokenView } from '@app/contracts';

/** docs/merchants/tokens.md: the TokenResponse; every scalar is a string. */
export function toTokenResponse(v: TokenView) {
  return {
    TokenCard: v.token,
    BIN: maskedNumberOf(v),
    CardHolder: v.holder,
    Month: String(v.expMonth).padStart(2, '0'),
    Year: String(v.expYear),
    Flag: v.brand,
    Created_at: String(v.createdAt),
    Client: v.billing ?? {},
  };
}
export type TokenResponse = ReturnType<typeof toTokenResponse>;
