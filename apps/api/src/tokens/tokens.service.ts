import { Inject, Injectable } from '@nestjs/common';
import { lastValueFrom } from 'rxjs';
import { Patterns, TokenAddRequest, TokenView, tokenNotFound, tokenViewOf } from '@app/contracts';
import { TypedClient } from '@app/messaging';
import { TokenFactsRepository } from '@app/persistence';
import { sealJson } from '@app/vault/transit';
import { ApiConfig } from '../config/api.config';
import { GATEWAY_CLIENT } from '../messaging/gateway-client.provider';
import { TokenAddInput } from './token.dto';

/**
 * Token use cases: the API seals and forwards a card to the vault (the tokenizer), and reads a
 * token's non-secret facts from their projection (token_facts) itself.
 */
@Injectable()
export class TokensService {
  constructor(
    @Inject(GATEWAY_CLIENT) private readonly client: TypedClient,
    private readonly config: ApiConfig,
    private readonly facts: TokenFactsRepository,
  ) {}

  async add(merchantId: string, input: TokenAddInput): Promise<TokenView> {
    const request: TokenAddRequest = {
      merchantId,
      sealedCard: await sealJson(this.config.transitKeys, input.card),
      flag: input.flag,
      billing: input.billing,
    };
    return lastValueFrom(this.client.send(Patterns.TokenAdd, request));
  }

  /**
   * From the projection, without the queue. Every vault row is projected by a trigger in the
   * transaction that inserts it, so a token the projection lacks does not exist (for this
   * merchant): "not found", exactly as the vault answers it, for an unknown token and for another
   * merchant's alike, also while the tokenizer is down.
   */
  async retrieve(merchantId: string, token: string): Promise<TokenView> {
    const row = await this.facts.find(merchantId, token);
    if (!row) throw tokenNotFound('token');
    return tokenViewOf(row);
  }
}
