import { Controller } from '@nestjs/common';
import { Ctx, MessagePattern, Payload } from '@nestjs/microservices';
import { BullMqContext } from '@app/messaging';
import { Patterns, ReplyOf, RequestOf } from '@app/contracts';
import { asReply } from '../tokens/tokens.handler';
import { MoneyOperationsService } from './money-operations.service';
import { SalesService } from './sales.service';

@Controller()
export class PaymentsHandler {
  constructor(
    private readonly sales: SalesService,
    private readonly operations: MoneyOperationsService,
  ) {}

  @MessagePattern(Patterns.CardAuthorize)
  authorize(
    @Payload() req: RequestOf<typeof Patterns.CardAuthorize>,
    @Ctx() ctx: BullMqContext,
  ): Promise<ReplyOf<typeof Patterns.CardAuthorize>> {
    // A job started, failed or stalled before may have been decided already: only a first
    // delivery may trust the row recorded with it.
    return asReply(() => this.sales.authorize(req, ctx.isFirstDelivery()));
  }

  @MessagePattern(Patterns.CardCapture)
  capture(@Payload() req: RequestOf<typeof Patterns.CardCapture>): Promise<ReplyOf<typeof Patterns.CardCapture>> {
    return asReply(() => this.operations.capture(req));
  }

  @MessagePattern(Patterns.CardCancel)
  cancel(@Payload() req: RequestOf<typeof Patterns.CardCancel>): Promise<ReplyOf<typeof Patterns.CardCancel>> {
    return asReply(() => this.operations.cancel(req));
  }
}
