import { Controller } from '@nestjs/common';
import { MessagePattern, Payload } from '@nestjs/microservices';
import { AuthorizeRequest, CancelRequest, CaptureRequest, Patterns, TransactionView } from '@app/contracts';
import { asReply } from '../tokens/tokens.handler';
import { PaymentsService } from './payments.service';

@Controller()
export class PaymentsHandler {
  constructor(private readonly payments: PaymentsService) {}

  @MessagePattern(Patterns.CardAuthorize)
  authorize(@Payload() req: AuthorizeRequest): Promise<TransactionView> {
    return asReply(() => this.payments.authorize(req));
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
