import { Body, Controller, HttpCode, Post } from '@nestjs/common';
import { ApiBody, ApiOkResponse, ApiOperation, ApiTags } from '@nestjs/swagger';
import { MerchantAuthService } from '../auth/merchant-auth.service';
import { parseEnvelope } from '../envelope/envelope.parser';
import { TokensService } from './tokens.service';
import { parseTokenAdd, parseTokenRetrieve, TOKEN_ADD_OPERATIONS, TOKEN_RETRIEVE_OPERATIONS } from './token-request.parser';
import { toTokenResponse, TokenResponse } from './token-response';
import { TokenAddExample, TokenResponseSchema, TokenRetrieveExample } from './tokens.openapi';

@ApiTags('tokens')
@Controller('v1/token')
export class TokensController {
  constructor(
    private readonly auth: MerchantAuthService,
    private readonly tokens: TokensService,
  ) {}

  @Post('add')
  @HttpCode(200)
  @ApiOperation({ summary: 'Vault a card and return its token (the same card and expiry give the same token).' })
  @ApiBody({ schema: { type: 'object', example: TokenAddExample } })
  @ApiOkResponse({ schema: TokenResponseSchema })
  async add(@Body() body: unknown): Promise<TokenResponse> {
    const env = parseEnvelope(body, TOKEN_ADD_OPERATIONS);
    const input = parseTokenAdd(env.body);
    const merchantId = await this.auth.authenticate(env.merchantId, env.merchantKey);
    return toTokenResponse(await this.tokens.add(merchantId, input));
  }

  @Post('retrieve')
  @HttpCode(200)
  @ApiOperation({ summary: "Read a token's masked card data (never the number or security code)." })
  @ApiBody({ schema: { type: 'object', example: TokenRetrieveExample } })
  @ApiOkResponse({ schema: TokenResponseSchema })
  async retrieve(@Body() body: unknown): Promise<TokenResponse> {
    const env = parseEnvelope(body, TOKEN_RETRIEVE_OPERATIONS);
    const token = parseTokenRetrieve(env.body);
    const merchantId = await this.auth.authenticate(env.merchantId, env.merchantKey);
    return toTokenResponse(await this.tokens.retrieve(merchantId, token));
  }
}
