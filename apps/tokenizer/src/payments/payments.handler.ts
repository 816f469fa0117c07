import { Controller } from '@nestjs/common';
import { Ctx, MessagePattern, Payload } from '@nestjs/microservices';
import { BullMqContext } from '@app/messaging';
import { Patterns, ReplyOf, RequestOf } from '@app/contracts';
import { asReply } from '../tokens/tokens.handler';
import { PaymentsService } from './payments.service';

@Controller()
export class PaymentsHandler {
  constructor(private readonly payments: PaymentsService) {}

  @MessagePattern(Patterns.CardAuthorize)
  authorize(
    @Payload() req: RequestOf<typeof Patterns.CardAuthorize>,
    @Ctx() ctx: BullMqContext,
  ): Promise<ReplyOf<typeof Patterns.CardAuthorize>> {
    // A job started, failed or stalled before may have been decided already: only a first
    // delivery may trust the row recorded with it.
    return asReply(() => this.payments.authorize(req, ctx.isFirstDelivery()));
  }

  @MessagePattern(Patterns.CardCapture)
  capture(@Payload() req: RequestOf<typeof Patterns.CardCapture>): Promise<ReplyOf<typeof Patterns.CardCapture>> {
    return asReply(() => this.payments.capture(req));
  }

  @MessagePattern(Patterns.CardCancel)
  cancel(@Payload() req: RequestOf<typeof Patterns.CardCancel>): Promise<ReplyOf<typeof Patterns.CardCancel>> {
    return asReply(() => this.payments.cancel(req));
  }
}
