import { Body, Controller, Headers, HttpCode, Post, Req, Res } from '@nestjs/common';
import { ApiBody, ApiHeader, ApiOperation, ApiResponse, ApiTags } from '@nestjs/swagger';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { rawBodyOf } from '../http/json-body';
import { MerchantAuthService } from '../auth/merchant-auth.service';
import { parseEnvelope } from '../envelope/envelope.parser';
import { IdempotencyService } from '../idempotency/idempotency.service';
import { parseSale } from '../transactions/sale-request.parser';
import { parseCancel, parseCapture, parseReport } from '../transactions/transaction-operations.parser';
import { ReceiverService } from './receiver.service';
import { toTransactionResponse } from '@app/contracts';
import { ReceiverExamples, TransactionResponseSchema } from './receiver.openapi';

const OPERATIONS = ['sale', 'authorize', 'capture', 'cancel', 'report'] as const;
type Operation = (typeof OPERATIONS)[number];

/** In the test environment every acquirer code is served by the sandbox acquirer. */
const KNOWN_ACQUIRERS = Array.from({ length: 999 }, (_, i) => i + 1);

@ApiTags('transactions')
@Controller('v1/receiver')
export class ReceiverController {
  constructor(
    private readonly auth: MerchantAuthService,
    private readonly receiver: ReceiverService,
    private readonly idempotency: IdempotencyService,
  ) {}

  @Post()
  @HttpCode(200)
  @ApiOperation({ summary: 'sale, authorize, capture, cancel or report: the operation key of the transaction-request selects it.' })
  @ApiHeader({ name: 'Idempotency-Key', required: false, description: 'Same key and body within 24 h: the first answer is replayed (Idempotent-Replayed: true).' })
  @ApiHeader({ name: 'Prefer', required: false, description: '"respond-async": answer 202 with status 0 at once; the outcome follows on urlReturn and report.' })
  @ApiBody({ schema: { type: 'object', examples: ReceiverExamples } as never })
  @ApiResponse({ status: 200, description: 'TransactionResponse (a decline is a 200 with status 4)', schema: TransactionResponseSchema })
  @ApiResponse({ status: 202, description: 'Accepted, outcome not known yet (status 0)', schema: TransactionResponseSchema })
  async receive(
    @Body() body: unknown,
    @Headers('idempotency-key') idempotencyKey: string | undefined,
    @Headers('prefer') prefer: string | undefined,
    @Res({ passthrough: true }) reply: FastifyReply,
    @Req() req: FastifyRequest,
  ): Promise<unknown> {
    const env = parseEnvelope(body, OPERATIONS);
    const operation = env.operation as Operation;
    const run = this.parse(operation, env.body, /respond-async/i.test(prefer ?? ''), idempotencyKey);
    const merchantId = await this.auth.authenticate(env.merchantId, env.merchantKey);
    const result = await this.idempotency.run(merchantId, idempotencyKey, `receiver/${operation}`, rawBodyOf(req) ?? Buffer.alloc(0), () => run(merchantId));
    reply.status(result.status);
    if (result.replayed) reply.header('Idempotent-Replayed', 'true');
    return result.body;
  }

  /** Parses (and so validates) before authenticating or writing anything. */
  private parse(operation: Operation, op: Parameters<typeof parseSale>[0], respondAsync: boolean, idempotencyKey?: string) {
    switch (operation) {
      case 'sale':
      case 'authorize': {
        const input = parseSale(op, KNOWN_ACQUIRERS);
        return async (merchantId: string) => {
          const outcome = await this.receiver.sale(merchantId, input, operation, respondAsync);
          return { status: outcome.httpStatus, body: toTransactionResponse(outcome.view, operation) };
        };
      }
      case 'capture': {
        const req = parseCapture(op);
        return async (merchantId: string) => ({ status: 200, body: toTransactionResponse(await this.receiver.capture(merchantId, req, idempotencyKey), 'capture') });
      }
      case 'cancel': {
        const req = parseCancel(op);
        return async (merchantId: string) => ({ status: 200, body: toTransactionResponse(await this.receiver.cancel(merchantId, req, idempotencyKey), 'cancel') });
      }
      case 'report': {
        const by = parseReport(op);
        return async (merchantId: string) => ({ status: 200, body: toTransactionResponse(await this.receiver.report(merchantId, by), 'report') });
      }
    }
  }
}
