import type { Queue } from 'bullmq';
import type { DeliveriesRepository, ListenersRepository } from '@app/persistence';
import { releaseHeld } from './replay';

/**
 * An operator disables a listener (one never delivered to as well): its deliveries are held, not
 * attempted, until it is enabled again. 'already_disabled' when it is. Shared by the CLI's
 * listener:disable and the console's Listeners page.
 */
export async function disableListener(
  listeners: ListenersRepository,
  merchantId: string,
  origin: string,
  operatorId: string,
): Promise<'disabled' | 'already_disabled'> {
  return (await listeners.disable(merchantId, origin, operatorId)) ? 'disabled' : 'already_disabled';
}

/**
 * Enables a listener again and releases its held deliveries, oldest first (releaseHeld): how many
 * it released, or 'not_disabled' when it was neither disabled nor holding anything. An enabled
 * listener may still hold deliveries (a retry held while it was being enabled): those are
 * released too. Shared by the CLI's listener:enable and the console's Listeners page.
 */
export async function enableListener(
  listeners: ListenersRepository,
  deliveries: DeliveriesRepository,
  queue: Queue,
  merchantId: string,
  origin: string,
  onPage?: (released: number) => void,
): Promise<{ released: number } | 'not_disabled'> {
  const enabled = await listeners.enable(merchantId, origin);
  if (!enabled && (await listeners.heldCount(merchantId, origin)) === 0) return 'not_disabled';
  return { released: await releaseHeld(deliveries, queue, merchantId, origin, onPage) };
}
