import { Injectable } from '@nestjs/common';
import { toTransactionResponse, TransactionEvent } from '@app/contracts';
import { Created, DeliveriesRepository } from '@app/persistence';
import { listenerOrigin } from '@app/webhooks';
import { DeliveryWorker } from './delivery.worker';

/**
 * transaction.status_changed → a delivery to the merchant's urlReturn (docs/merchants/webhooks.md). The body is
 * rendered once from the event's snapshot of the transaction and stored; attempts only re-sign it.
 */
@Injectable()
export class DeliveriesService {
  constructor(
    private readonly deliveries: DeliveriesRepository,
    private readonly worker: DeliveryWorker,
  ) {}

  async onStatusChanged(e: TransactionEvent): Promise<void> {
    const made = await this.createFor(e);
    if (!made) return; // no listener: nothing to deliver
    const { row: delivery, created } = made;
    // A re-delivered event (after a crash) finds the delivery and, unless it is settled, tries
    // again with the same webhook-id; a retry job it may have queued already dedups by its id.
    // A delivery to a disabled listener is created held: enabling the listener releases it.
    if (delivery.status === 'held') return;
    if (created) await this.worker.deliverNow(delivery, true);
    else if (delivery.status === 'pending' || delivery.status === 'sending') await this.worker.deliverNow(delivery);
  }

  /**
   * A status change whose event was lost (EventSweeper): its delivery is created and attempted as
   * the event would have, but only by whoever creates it. One that exists already belongs to its
   * event, or to another replica's sweep, which attempts it: attempting it here too would send it
   * twice at once. Resolves true when this call created it.
   */
  async onLostStatusChange(e: TransactionEvent): Promise<boolean> {
    const made = await this.createFor(e);
    if (!made?.created) return false;
    if (made.row.status !== 'held') await this.worker.deliverNow(made.row, true);
    return true;
  }

  /** The change's delivery, created now (claimed for its first attempt) or found; undefined without a listener. */
  private async createFor(e: TransactionEvent): Promise<Created | undefined> {
    if (!e.urlReturn || !e.view) return undefined;
    // Existing listeners read TransactionID from the query (then call report). Appended to the
    // query as written: re-encoding it could break a listener whose URL carries a signed query.
    const [beforeHash, hash] = e.urlReturn.split(/#(.*)/s);
    const url = `${beforeHash}${beforeHash.includes('?') ? '&' : '?'}TransactionID=${encodeURIComponent(e.view.id)}${hash !== undefined ? `#${hash}` : ''}`;
    const body = JSON.stringify({
      type: 'transaction.status_changed',
      timestamp: new Date().toISOString(),
      data: toTransactionResponse(e.view),
    });
    // Created claimed for its first attempt, made by the caller (given back if the host stays busy).
    return this.deliveries.createOnce(
      {
        merchantId: e.merchantId,
        transactionId: e.transactionId.toLowerCase(),
        statusVersion: e.statusVersion,
        event: 'transaction.status_changed',
        url,
        origin: originOf(url),
        body,
      },
      true,
    );
  }
}

/** The listener of a delivery URL; the api accepts only http(s) URLs, so null is for an event from elsewhere. */
function originOf(url: string): string | null {
  try {
    return listenerOrigin(url);
  } catch {
    return null;
  }
}
