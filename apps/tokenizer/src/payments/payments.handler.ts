import { Controller } from '@nestjs/common';
import { Ctx, MessagePattern, Payload } from '@nestjs/microservices';
import { BullMqContext } from '@app/messaging';
import { AuthorizeRequest, CancelRequest, CaptureRequest, Patterns, TransactionView } from '@app/contracts';
import { asReply } from '../tokens/tokens.handler';
import { PaymentsService } from './payments.service';

@Controller()
export class PaymentsHandler {
  constructor(private readonly payments: PaymentsService) {}

  @MessagePattern(Patterns.CardAuthorize)
  authorize(@Payload() req: AuthorizeRequest, @Ctx() ctx: BullMqContext): Promise<TransactionView> {
    const job = ctx.getJob();
    // A job started, failed or stalled before may have been decided already: only a first
    // delivery may trust the row recorded with it.
    const firstDelivery = job.attemptsStarted <= 1 && job.attemptsMade === 0 && !job.stalledCounter;
    return asReply(() => this.payments.authorize(req, firstDelivery));
  }

  @MessagePattern(Patterns.CardCapture)
  capture(@Payload() req: CaptureRequest): Promise<TransactionView> {
    return asReply(() => this.payments.capture(req));
  }

  @MessagePattern(Patterns.CardCancel)
  cancel(@Payload() req: CancelRequest): Promise<TransactionView> {
    return asReply(() => this.payments.cancel(req));
  }
}
