import { Logger } from '@nestjs/common';
import { safeErrorText } from '@app/platform';
import { deliveriesDeferred } from './delivery-metrics';
import { destinationKey } from './destination';
import { HostSlots, Release } from './host-slots';
import { MerchantSlots } from './merchant-slots';

/**
 * The slots an attempt needs: its destination's (HostSlots, in this process) then its merchant's
 * (MerchantSlots, over every replica), released together.
 */
export class AttemptSlots {
  constructor(
    private readonly hosts: HostSlots,
    private readonly merchants: MerchantSlots,
    /** The wait when the merchant's slots cannot be counted (Redis down). */
    private readonly unreadableRetryMs: number,
    private readonly logger: Logger,
  ) {}

  /**
   * Both slots, released together; or, when either stays taken, the milliseconds the attempt should
   * wait in the queue. `host` is the listener's URL or host (its port does not count).
   */
  async acquire(host: string, merchantId: string): Promise<Release | number> {
    const destination = destinationKey(host);
    const hostSlot = await this.hosts.acquire(destination);
    if (!hostSlot) {
      deliveriesDeferred.inc({ cap: 'destination' });
      return this.hosts.deferMs(destination);
    }
    let merchantSlot: Release | undefined;
    try {
      merchantSlot = await this.merchants.acquire(merchantId);
    } catch (e) {
      // The merchant's slots could not be counted: nothing is sent, the delivery tries again shortly.
      hostSlot();
      this.logger.warn(`merchant ${merchantId} slots: ${safeErrorText(e)}`);
      return this.unreadableRetryMs;
    }
    if (!merchantSlot) {
      hostSlot();
      deliveriesDeferred.inc({ cap: 'merchant' });
      return this.merchants.deferMs(merchantId);
    }
    return () => {
      merchantSlot();
      hostSlot();
    };
  }
}
