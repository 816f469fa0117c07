import { Billing, ClearCard, DomainError, ErrorCodes } from '@app/contracts';
import { BillingDto, billingOf } from '../envelope/billing.dto';
import { CardExpirationDate, CardHolder, CardNumber, CardSecurityCode, Flag } from '../envelope/card-fields';
import { validated } from '../envelope/validate';
import { Nested, present, Text, textOf } from '../envelope/wire-fields';

export const TOKEN_ADD_OPERATIONS = ['tokencard', 'tokenCard'] as const;
export const TOKEN_RETRIEVE_OPERATIONS = ['retrieve-token'] as const;

const TOKEN = /^[0-9a-fA-F]{64}$/;

/**
 * tokencard: the card is fully validated here too (Luhn, brand, expiry), so a bad card never
 * reaches the queue, even sealed; the tokenizer checks again because it trusts no caller.
 */
export class TokenAddDto {
  @CardNumber()
  cardNumber!: string;

  @CardHolder()
  cardHolder!: string;

  @CardExpirationDate()
  cardExpirationDate!: string;

  @CardSecurityCode()
  cardSecurityCode?: string;

  @Flag()
  flag?: string;

  @Nested(() => BillingDto)
  billing?: BillingDto;
}

export class TokenRetrieveDto {
  @Text({
    max: 64,
    required: (o) => !present(o.tokenCard),
    example: '3b1f6c0e5d2a4f8b9c7e1d0a2b3c4d5e6f708192a3b4c5d6e7f8091a2b3c4d5e',
    description: 'The token (64 hexadecimal characters).',
  })
  token?: string;

  @Text({ max: 64, description: 'Another name for token.' })
  tokenCard?: string;
}

export interface TokenAddInput {
  card: ClearCard;
  flag?: string;
  billing?: Billing;
}

export function parseTokenAdd(body: Record<string, unknown>): TokenAddInput {
  const dto = validated(TokenAddDto, body);
  const card: ClearCard = {
    cardNumber: textOf(dto.cardNumber)!,
    cardHolder: textOf(dto.cardHolder)!,
    cardExpirationDate: textOf(dto.cardExpirationDate)!,
  };
  if (present(dto.cardSecurityCode)) card.cardSecurityCode = textOf(dto.cardSecurityCode);
  return { card, flag: present(dto.flag) ? textOf(dto.flag) : undefined, billing: billingOf(dto.billing) };
}

export function parseTokenRetrieve(body: Record<string, unknown>): string {
  const dto = validated(TokenRetrieveDto, body);
  const key = present(dto.token) ? 'token' : 'tokenCard';
  const token = textOf(dto[key])!;
  // A malformed token can't exist: answer as for an unknown one, without a round trip.
  if (!TOKEN.test(token)) throw new DomainError('not_found', ErrorCodes.TokenNotFound, 'Token not found.', key);
  return token.toLowerCase();
}
