import { Controller } from '@nestjs/common';
import { EventPattern, Payload } from '@nestjs/microservices';
import { Events, TransactionEvent } from '@app/contracts';
import { SettlementService } from './settlement.service';

/** Thin: each event is one use case; a thrown error fails the job and BullMQ retries it. */
@Controller()
export class SettlementHandler {
  constructor(private readonly settlement: SettlementService) {}

  @EventPattern(Events.TransactionCaptured)
  captured(@Payload() e: TransactionEvent): Promise<void> {
    return this.settlement.onCaptured(e);
  }

  @EventPattern(Events.TransactionCancelled)
  cancelled(@Payload() e: TransactionEvent): Promise<void> {
    return this.settlement.onCancelled(e);
  }
}
