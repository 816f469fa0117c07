import { Controller } from '@nestjs/common';
import { EventPattern, Payload } from '@nestjs/microservices';
import { Events, TransactionEvent } from '@app/contracts';
import { DeliveriesService } from './deliveries.service';

@Controller()
export class StatusChangedHandler {
  constructor(private readonly deliveries: DeliveriesService) {}

  @EventPattern(Events.TransactionStatusChanged)
  statusChanged(@Payload() e: TransactionEvent): Promise<void> {
    return this.deliveries.onStatusChanged(e);
  }
}
