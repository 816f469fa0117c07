import { Controller, Get, HttpCode, Param, Post, Query } from '@nestjs/common';
import { ApiBearerAuth, ApiExcludeController } from '@nestjs/swagger';
import { DomainError, ErrorCodes } from '@app/contracts';
import { DeliveriesRepository, DeliveryStatus } from '@app/persistence';
import { replayDelivery } from '@app/webhooks';
import { AdminQueues } from './admin-queues';

const STATUSES: readonly DeliveryStatus[] = ['pending', 'sending', 'succeeded', 'failed', 'blocked'];

/** Operator endpoints (behind ADMIN_TOKEN, checked for every /admin path in main.ts). */
@ApiExcludeController()
@ApiBearerAuth()
@Controller('admin/deliveries')
export class AdminController {
  constructor(
    private readonly deliveries: DeliveriesRepository,
    private readonly queues: AdminQueues,
  ) {}

  @Get()
  async list(@Query('status') status?: string, @Query('merchant') merchant?: string, @Query('limit') limit?: string) {
    if (status && !STATUSES.includes(status as DeliveryStatus)) {
      throw DomainError.validation(ErrorCodes.InvalidField, 'status', `status must be one of ${STATUSES.join(', ')}.`);
    }
    const n = limit === undefined ? 100 : Number(limit);
    if (!Number.isInteger(n) || n < 1 || n > 1000) throw DomainError.validation(ErrorCodes.InvalidField, 'limit', 'limit must be a whole number from 1 to 1000.');
    return { deliveries: await this.deliveries.list({ status: status as DeliveryStatus | undefined, merchantId: merchant, limit: n }) };
  }

  @Get(':id')
  async show(@Param('id') id: string) {
    const d = await this.deliveries.find(id);
    if (!d) throw new DomainError('not_found', ErrorCodes.TransactionNotFound, 'No such delivery.', 'id');
    return { delivery: d, attempts: await this.deliveries.attemptsOf(d.id) };
  }

  @Post(':id/replay')
  @HttpCode(202)
  async replay(@Param('id') id: string) {
    const outcome = await replayDelivery(this.deliveries, this.queues.delivery, id);
    if (outcome === 'not_found') throw new DomainError('not_found', ErrorCodes.TransactionNotFound, 'No such delivery.', 'id');
    if (outcome === 'not_replayable') throw new DomainError('conflict', ErrorCodes.InvalidState, 'Only a failed or blocked delivery can be replayed.', 'id');
    return { deliveryId: id.toLowerCase(), replay: 'queued' };
  }
}
