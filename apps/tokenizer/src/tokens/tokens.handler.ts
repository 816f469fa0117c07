import { Controller, Logger } from '@nestjs/common';
import { MessagePattern, Payload, RpcException } from '@nestjs/microservices';
import { DomainError, ErrorCodes, Patterns, ReplyOf, RequestOf } from '@app/contracts';
import { errorCodeOf, unavailabilityOf } from '@app/platform';
import { TokensService } from './tokens.service';

/** Thin: map the message to one use case; domain failures go back as structured replies. */
@Controller()
export class TokensHandler {
  constructor(private readonly tokens: TokensService) {}

  @MessagePattern(Patterns.TokenAdd)
  add(@Payload() req: RequestOf<typeof Patterns.TokenAdd>): Promise<ReplyOf<typeof Patterns.TokenAdd>> {
    return asReply(() => this.tokens.add(req));
  }

  @MessagePattern(Patterns.TokenRetrieve)
  retrieve(@Payload() req: RequestOf<typeof Patterns.TokenRetrieve>): Promise<ReplyOf<typeof Patterns.TokenRetrieve>> {
    return asReply(() => this.tokens.retrieve(req));
  }
}

const replies = new Logger('Replies');

/**
 * A domain failure is its structured reply; so is a dependency that failed the use case (Postgres
 * unreachable, or a statement it cancelled for a statement or lock timeout: nothing of that
 * statement's transaction committed), as "unavailable, retry" (the api's 503), logged by cause
 * and SQLSTATE only, never with the statement's parameters. Anything else is a bug: the RPC layer
 * logs it and the caller gets the generic 503.
 */
export async function asReply<T>(fn: () => Promise<T>): Promise<T> {
  try {
    return await fn();
  } catch (e) {
    if (e instanceof DomainError) throw new RpcException(e.toPayload());
    const cause = unavailabilityOf(e);
    if (cause) {
      replies.warn(`dependency unavailable: ${cause} (${errorCodeOf(e, 'no code')})`);
      throw new RpcException(
        new DomainError('unavailable', ErrorCodes.ServiceUnavailable, 'The database did not answer in time; retry later.').toPayload(),
      );
    }
    throw e;
  }
}
