import { Injectable } from '@nestjs/common';
import { toTransactionResponse, TransactionEvent } from '@app/contracts';
import { DeliveriesRepository } from '@app/persistence';
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
    if (!e.urlReturn || !e.view) return; // no listener: nothing to deliver
    // Existing listeners read TransactionID from the query (then call report). Appended to the
    // query as written: re-encoding it could break a listener whose URL carries a signed query.
    const [beforeHash, hash] = e.urlReturn.split(/#(.*)/s);
    const url = `${beforeHash}${beforeHash.includes('?') ? '&' : '?'}TransactionID=${encodeURIComponent(e.view.id)}${hash !== undefined ? `#${hash}` : ''}`;
    const body = JSON.stringify({
      type: 'transaction.status_changed',
      timestamp: new Date().toISOString(),
      data: toTransactionResponse(e.view),
    });
    // Created claimed for its first attempt, made here (given back if the host stays busy).
    const { row: delivery, created } = await this.deliveries.createOnce(
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
    // A re-delivered event (after a crash) finds the delivery and, unless it is settled, tries
    // again with the same webhook-id; a retry job it may have queued already dedups by its id.
    // A delivery to a disabled listener is created held: enabling the listener releases it.
    if (delivery.status === 'held') return;
    if (created) await this.worker.deliverNow(delivery, true);
    else if (delivery.status === 'pending' || delivery.status === 'sending') await this.worker.deliverNow(delivery);
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
