import type { Queue } from 'bullmq';
import type { DeliveriesRepository, DeliveryCursor } from '@app/persistence';
import { enqueueDelivery } from './delivery-queue';

export type ReplayOutcome = 'queued' | 'not_found' | 'not_replayable';

/**
 * Replays a delivery that never succeeded (failed or blocked) with a fresh schedule: the same
 * stored body and webhook-id, new timestamps and signatures. Shared by the CLI, the admin API, the
 * console and the merchant portal, which passes its link's merchant: another merchant's delivery
 * is then not_found, exactly as a missing one.
 */
export async function replayDelivery(
  deliveries: DeliveriesRepository,
  queue: Queue,
  id: string,
  merchantId?: string,
): Promise<ReplayOutcome> {
  const d = await deliveries.find(id, merchantId);
  if (!d) return 'not_found';
  const replay = await deliveries.resetForReplay(d.id);
  if (replay === undefined) return 'not_replayable';
  await enqueueDelivery(queue, d, { replay });
  return 'queued';
}

/** Held deliveries looked at per page while releasing a listener's. */
const RELEASE_PAGE = 200;

/**
 * Releases the held deliveries of one listener (once it is enabled again): each pending again
 * and queued as a replay, oldest first ((created_at, id) order), so the queue, which takes its
 * jobs in the order they were added, attempts them in that order. Returns how many it released.
 * A page whose jobs are not all queued (Redis gone midway) is not lost: its deliveries are pending
 * with no job, and the sweeper queues them again.
 */
export async function releaseHeld(
  deliveries: DeliveriesRepository,
  queue: Queue,
  merchantId: string,
  origin: string,
  onPage?: (released: number) => void,
): Promise<number> {
  let released = 0;
  let after: DeliveryCursor | undefined;
  for (;;) {
    const page = await deliveries.releaseHeldPage(merchantId, origin, RELEASE_PAGE, after);
    if (!page.length) return released;
    for (const d of page) await enqueueDelivery(queue, { id: d.id, url: d.url, merchant_id: merchantId }, { replay: d.replays });
    released += page.length;
    after = { createdAt: page[page.length - 1].createdAt, id: page[page.length - 1].id };
    onPage?.(released);
  }
}
