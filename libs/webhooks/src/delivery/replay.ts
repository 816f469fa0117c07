import type { Queue } from 'bullmq';
import type { DeliveriesRepository } from '@app/persistence';
import { enqueueDelivery } from './delivery-queue';

export type ReplayOutcome = 'queued' | 'not_found' | 'not_replayable';

/**
 * Replays a delivery that never succeeded (failed or blocked) with a fresh schedule: the same
 * stored body and webhook-id, new timestamps and signatures. Shared by the CLI and the admin API.
 */
export async function replayDelivery(deliveries: DeliveriesRepository, queue: Queue, id: string): Promise<ReplayOutcome> {
  const d = await deliveries.find(id);
  if (!d) return 'not_found';
  const replay = await deliveries.resetForReplay(d.id);
  if (replay === undefined) return 'not_replayable';
  await enqueueDelivery(queue, d, { replay });
  return 'queued';
}
