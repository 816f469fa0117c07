import { Controller } from '@nestjs/common';
import { MessagePattern, Payload, RpcException } from '@nestjs/microservices';
import { DomainError, Patterns, TokenAddRequest, TokenRetrieveRequest, TokenView } from '@app/contracts';
import { TokensService } from './tokens.service';

/** Thin: map the message to one use case; domain failures go back as structured replies. */
@Controller()
export class TokensHandler {
  constructor(private readonly tokens: TokensService) {}

  @MessagePattern(Patterns.TokenAdd)
  add(@Payload() req: TokenAddRequest): Promise<TokenView> {
    return asReply(() => this.tokens.add(req));
  }

  @MessagePattern(Patterns.TokenRetrieve)
  retrieve(@Payload() req: TokenRetrieveRequest): Promise<TokenView> {
    return asReply(() => this.tokens.retrieve(req));
  }
}

export async function asReply<T>(fn: () => Promise<T>): Promise<T> {
  try {
    return await fn();
  } catch (e) {
    if (e instanceof DomainError) throw new RpcException(e.toPayload());
    throw e;
  }
}
