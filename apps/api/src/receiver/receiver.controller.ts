import { Body, Controller, Headers, HttpCode, Post, Res } from '@nestjs/common';
import { ApiBody, ApiExtraModels, ApiHeader, ApiOperation, ApiResponse, ApiTags, getSchemaPath } from '@nestjs/swagger';
import type { FastifyReply } from 'fastify';
import { MerchantAuthService } from '../auth/merchant-auth.service';
import { envelopeDoc, readEnvelope } from '../envelope/envelope';
import { IdempotencyService } from '../idempotency/idempotency.service';
import { parseSale, SaleDto } from '../transactions/sale.dto';
import { parseRebill, RebillDto } from '../transactions/rebill.dto';
import { RebillService } from './rebill.service';
import { parseReport, parseTransactionOperation, ReportDto, TransactionOperationDto } from '../transactions/operations.dto';
import { ReceiverService } from './receiver.service';
import type { Budget } from '@app/http';
import { toTransactionResponse } from '@app/contracts';
import { TransactionResponseSchema } from './receiver.openapi';
import { TOO_MANY_REQUESTS } from '../rate-limit/rate-limit.openapi';

const OPERATIONS = ['sale', 'authorize', 'capture', 'cancel', 'report', 'rebill'] as const;
type Operation = (typeof OPERATIONS)[number];
/** Which of the merchant's rate-limit budgets each operation spends. */
const BUDGET: Record<Operation, Budget> = {
  sale: 'writes',
  authorize: 'writes',
  capture: 'writes',
  cancel: 'writes',
  report: 'reads',
  rebill: 'writes',
};

/** /docs: each operation's whole request, from the classes that validate it. */
const REQUESTS = [
  envelopeDoc('sale', SaleDto),
  envelopeDoc('authorize', SaleDto),
  envelopeDoc('capture', TransactionOperationDto),
  envelopeDoc('cancel', TransactionOperationDto),
  envelopeDoc('report', ReportDto),
  envelopeDoc('rebill', RebillDto),
];

@ApiTags('transactions')
@ApiExtraModels(...REQUESTS)
@Controller('v1/receiver')
export class ReceiverController {
  constructor(
    private readonly auth: MerchantAuthService,
    private readonly receiver: ReceiverService,
    private readonly idempotency: IdempotencyService,
    private readonly rebills: RebillService,
  ) {}

  @Post()
  @HttpCode(200)
  @ApiOperation({ summary: 'sale, authorize, capture, cancel, report or rebill: the operation key of the transaction-request selects it.' })
  @ApiHeader({
    name: 'Idempotency-Key',
    required: false,
    description: 'Same key and body within 24 h: the first answer is replayed (Idempotent-Replayed: true).',
  })
  @ApiHeader({
    name: 'Prefer',
    required: false,
    description: '"respond-async": answer 202 with status 0 at once; the outcome follows on urlReturn and report.',
  })
  @ApiBody({ schema: { oneOf: REQUESTS.map((r) => ({ $ref: getSchemaPath(r) })) } })
  @ApiResponse({ status: 200, description: 'TransactionResponse (a decline is a 200 with status 4)', schema: TransactionResponseSchema })
  @ApiResponse({ status: 202, description: 'Accepted, outcome not known yet (status 0)', schema: TransactionResponseSchema })
  @ApiResponse(TOO_MANY_REQUESTS)
  async receive(
    @Body() body: unknown,
    @Headers('idempotency-key') idempotencyKey: string | undefined,
    @Headers('prefer') prefer: string | undefined,
    @Res({ passthrough: true }) reply: FastifyReply,
  ): Promise<unknown> {
    const envelope = readEnvelope(body, OPERATIONS);
    const operation = envelope.operation as Operation;
    const run = this.parse(operation, envelope.body, /respond-async/i.test(prefer ?? ''), idempotencyKey);
    const merchantId = await this.auth.admit(envelope.merchantId, envelope.merchantKey, BUDGET[operation], reply.request.ip);
    const result = await this.idempotency.run(merchantId, idempotencyKey, `receiver/${operation}`, body, () => run(merchantId));
    reply.status(result.status);
    if (result.replayed) reply.header('Idempotent-Replayed', 'true');
    return result.body;
  }

  /** Parses (and so validates) before authenticating or writing anything. */
  private parse(operation: Operation, op: Record<string, unknown>, respondAsync: boolean, idempotencyKey?: string) {
    switch (operation) {
      case 'sale':
      case 'authorize': {
        const input = parseSale(op);
        return async (merchantId: string) => {
          const outcome = await this.receiver.sale(merchantId, input, operation, respondAsync);
          return { status: outcome.httpStatus, body: toTransactionResponse(outcome.view, operation) };
        };
      }
      case 'rebill': {
        const input = parseRebill(op);
        return async (merchantId: string) => {
          const outcome = await this.rebills.create(merchantId, input, respondAsync);
          return { status: outcome.httpStatus, body: toTransactionResponse(outcome.view, 'rebill') };
        };
      }
      case 'capture': {
        const req = parseTransactionOperation(op);
        return async (merchantId: string) => ({
          status: 200,
          body: toTransactionResponse(await this.receiver.capture(merchantId, req, idempotencyKey), 'capture'),
        });
      }
      case 'cancel': {
        const req = parseTransactionOperation(op);
        return async (merchantId: string) => ({
          status: 200,
          body: toTransactionResponse(await this.receiver.cancel(merchantId, req, idempotencyKey), 'cancel'),
        });
      }
      case 'report': {
        const by = parseReport(op);
        return async (merchantId: string) => ({
          status: 200,
          body: toTransactionResponse(await this.receiver.report(merchantId, by), 'report'),
        });
      }
    }
  }
}
