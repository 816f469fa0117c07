import { Controller, Get, HttpCode, Param, Post, Query } from '@nestjs/common';
import { ApiBearerAuth, ApiExcludeController } from '@nestjs/swagger';
import { DomainError, ErrorCodes } from '@app/contracts';
import { DELIVERY_STATUSES, DeliveriesRepository, DeliveryRow, DeliveryStatus, MerchantsRepository } from '@app/persistence';
import { replayDelivery } from '@app/webhooks/delivery';
import { AdminQueues } from './admin-queues';

const STATUSES: readonly DeliveryStatus[] = DELIVERY_STATUSES;

/** Operator endpoints (behind an operator's token and role, checked and audited for every /admin path in admin.setup.ts). */
@ApiExcludeController()
@ApiBearerAuth()
@Controller('admin/deliveries')
export class AdminController {
  constructor(
    private readonly deliveries: DeliveriesRepository,
    private readonly queues: AdminQueues,
    private readonly merchants: MerchantsRepository,
  ) {}

  @Get()
  async list(@Query('status') status?: string, @Query('merchant') merchant?: string, @Query('limit') limit?: string) {
    if (status && !STATUSES.includes(status as DeliveryStatus)) {
      throw DomainError.validation(ErrorCodes.InvalidField, 'status', `status must be one of ${STATUSES.join(', ')}.`);
    }
    const n = limit === undefined ? 100 : Number(limit);
    if (!Number.isInteger(n) || n < 1 || n > 1000)
      throw DomainError.validation(ErrorCodes.InvalidField, 'limit', 'limit must be a whole number from 1 to 1000.');
    // `merchant` is the merchant's public id (or, for merchants integrated before, its UUID).
    // A repeated query parameter arrives as an array: one merchant per request.
    if (merchant !== undefined && typeof merchant !== 'string')
      throw DomainError.validation(ErrorCodes.InvalidField, 'merchant', 'merchant must be given once.');
    const merchantId = merchant === undefined ? undefined : await this.merchants.resolve(merchant);
    if (merchant !== undefined && !merchantId) {
      throw DomainError.validation(
        ErrorCodes.InvalidField,
        'merchant',
        'merchant must be the id of a merchant (10 digits, as merchant:create printed it, or its UUID).',
      );
    }
    return {
      deliveries: await this.withPublicIds(
        await this.deliveries.list({ status: status as DeliveryStatus | undefined, merchantId, limit: n }),
      ),
    };
  }

  @Get(':id')
  async show(@Param('id') id: string) {
    const d = await this.deliveries.find(id);
    if (!d) throw new DomainError('not_found', ErrorCodes.TransactionNotFound, 'No such delivery.', 'id');
    const [delivery] = await this.withPublicIds([d]);
    return { delivery, attempts: await this.deliveries.attemptsOf(d.id) };
  }

  /** Deliveries name their merchant by public id, as the operator knows it. */
  private async withPublicIds<T extends Pick<DeliveryRow, 'merchant_id'>>(rows: T[]): Promise<T[]> {
    const publicIds = await this.merchants.publicIdsOf(rows.map((r) => r.merchant_id));
    return rows.map((r) => ({ ...r, merchant_id: publicIds.get(r.merchant_id) ?? r.merchant_id }));
  }

  @Post(':id/replay')
  @HttpCode(202)
  async replay(@Param('id') id: string) {
    const outcome = await replayDelivery(this.deliveries, this.queues.delivery, id);
    if (outcome === 'not_found') throw new DomainError('not_found', ErrorCodes.TransactionNotFound, 'No such delivery.', 'id');
    if (outcome === 'not_replayable')
      throw new DomainError('conflict', ErrorCodes.InvalidState, 'Only a failed or blocked delivery can be replayed.', 'id');
    return { deliveryId: id.toLowerCase(), replay: 'queued' };
  }
}
