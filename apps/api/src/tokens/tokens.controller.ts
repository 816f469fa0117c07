import { Body, Controller, Headers, HttpCode, Post, Res } from '@nestjs/common';
import { ApiBody, ApiExtraModels, ApiHeader, ApiOkResponse, ApiOperation, ApiResponse, ApiTags, getSchemaPath } from '@nestjs/swagger';
import type { FastifyReply } from 'fastify';
import { MerchantAuthService } from '../auth/merchant-auth.service';
import { envelopeDoc, readEnvelope } from '../envelope/envelope';
import { IdempotencyService } from '../idempotency/idempotency.service';
import { TokensService } from './tokens.service';
import {
  parseTokenAdd,
  parseTokenRetrieve,
  TOKEN_ADD_OPERATIONS,
  TOKEN_RETRIEVE_OPERATIONS,
  TokenAddDto,
  TokenRetrieveDto,
} from './token.dto';
import { toTokenResponse } from './token-response';
import { TokenResponseSchema } from './tokens.openapi';
import { TOO_MANY_REQUESTS } from '../rate-limit/rate-limit.openapi';

const ADD = envelopeDoc('tokencard', TokenAddDto);
const RETRIEVE = envelopeDoc('retrieve-token', TokenRetrieveDto);
const IDEMPOTENCY = {
  name: 'Idempotency-Key',
  required: false,
  description:
    'Same key and body within 24 h: the first answer is replayed (Idempotent-Replayed: true); the same key with another body is a 409.',
};

@ApiTags('tokens')
@ApiExtraModels(ADD, RETRIEVE)
@Controller('v1/token')
export class TokensController {
  constructor(
    private readonly auth: MerchantAuthService,
    private readonly tokens: TokensService,
    private readonly idempotency: IdempotencyService,
  ) {}

  @Post('add')
  @HttpCode(200)
  @ApiOperation({
    summary:
      'Vault a card and return its token (the same card and expiry give the same token). The operation key may also be written tokenCard.',
  })
  @ApiHeader(IDEMPOTENCY)
  @ApiBody({ schema: { $ref: getSchemaPath(ADD) } })
  @ApiOkResponse({ schema: TokenResponseSchema })
  @ApiResponse(TOO_MANY_REQUESTS)
  async add(
    @Body() body: unknown,
    @Headers('idempotency-key') key: string | undefined,
    @Res({ passthrough: true }) reply: FastifyReply,
  ): Promise<unknown> {
    const envelope = readEnvelope(body, TOKEN_ADD_OPERATIONS);
    const input = parseTokenAdd(envelope.body);
    const merchantId = await this.auth.admit(envelope.merchantId, envelope.merchantKey, 'writes', reply.request.ip);
    return this.answer(
      reply,
      await this.idempotency.run(merchantId, key, 'token/add', body, async () => ({
        status: 200,
        body: toTokenResponse(await this.tokens.add(merchantId, input)),
      })),
    );
  }

  @Post('retrieve')
  @HttpCode(200)
  @ApiOperation({ summary: "Read a token's masked card data (never the number or security code)." })
  @ApiHeader(IDEMPOTENCY)
  @ApiBody({ schema: { $ref: getSchemaPath(RETRIEVE) } })
  @ApiOkResponse({ schema: TokenResponseSchema })
  @ApiResponse(TOO_MANY_REQUESTS)
  async retrieve(
    @Body() body: unknown,
    @Headers('idempotency-key') key: string | undefined,
    @Res({ passthrough: true }) reply: FastifyReply,
  ): Promise<unknown> {
    const envelope = readEnvelope(body, TOKEN_RETRIEVE_OPERATIONS);
    const token = parseTokenRetrieve(envelope.body);
    const merchantId = await this.auth.admit(envelope.merchantId, envelope.merchantKey, 'reads', reply.request.ip);
    return this.answer(
      reply,
      await this.idempotency.run(merchantId, key, 'token/retrieve', body, async () => ({
        status: 200,
        body: toTokenResponse(await this.tokens.retrieve(merchantId, token)),
      })),
    );
  }

  private answer(reply: FastifyReply, result: { status: number; body: unknown; replayed: boolean }): unknown {
    reply.status(result.status);
    if (result.replayed) reply.header('Idempotent-Replayed', 'true');
    return result.body;
  }
}
