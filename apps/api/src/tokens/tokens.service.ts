import { Inject, Injectable } from '@nestjs/common';
import { lastValueFrom } from 'rxjs';
import { Patterns, TokenAddRequest, TokenView } from '@app/contracts';
import { TypedClient } from '@app/messaging';
import { sealJson } from '@app/vault/transit';
import { ApiConfig } from '../config/api.config';
import { GATEWAY_CLIENT } from '../messaging/gateway-client.provider';
import { TokenAddInput } from './token.dto';

/** Token use cases: the API only seals and forwards; the vault lives in the tokenizer. */
@Injectable()
export class TokensService {
  constructor(
    @Inject(GATEWAY_CLIENT) private readonly client: TypedClient,
    private readonly config: ApiConfig,
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

  retrieve(merchantId: string, token: string): Promise<TokenView> {
    return lastValueFrom(this.client.send(Patterns.TokenRetrieve, { merchantId, token }));
  }
}
