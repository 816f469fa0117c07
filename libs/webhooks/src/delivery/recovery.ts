import type { Queue } from 'bullmq';
import type { RecoveriesRepository, RecoveryState } from '@app/persistence';
import { enqueueDelivery } from './delivery-queue';

/** The queue of recoveries (one job per recovery), consumed by every notifier replica. */
export const RECOVERY_QUEUE = 'webhook.recover';
/** Deliveries replayed per step (one transaction each). */
export const RECOVERY_PAGE = 200;

export interface RecoveryJob {
  recoveryId: string;
}

/**
 * Queues a recovery's run. The job id is the recovery's id, so starting it twice queues it once;
 * a job lost with Redis is queued again by the notifier (RecoveryWorker's sweep).
 */
export function enqueueRecovery(queue: Queue, recoveryId: string): Promise<unknown> {
  return queue.add(RECOVERY_QUEUE, { recoveryId } satisfies RecoveryJob, {
    jobId: recoveryId,
    attempts: 10,
    backoff: { type: 'exponential', delay: 1_000 },
    removeOnComplete: true,
    removeOnFail: { age: 7 * 86_400 },
  });
}

/**
 * Queues a recovery just started (its row committed as running): true when queued now, false when
 * the queue could not be reached. A recovery is started once its row is committed, so a queue that
 * is down does not undo it: the notifier's sweep queues a running recovery that has no job within
 * a minute. Callers say so rather than answering a failure for a recovery that will run.
 */
export async function queueStartedRecovery(queue: Queue, recoveryId: string): Promise<boolean> {
  try {
    await enqueueRecovery(queue, recoveryId);
    return true;
  } catch {
    return false;
  }
}

/**
 * Runs a recovery to its end, a page at a time (RecoveriesRepository.step): each page's
 * deliveries are queued as replays once the page is committed. It stops when a page is empty
 * (finished) or the recovery is no longer running (cancelled between two pages). Safe to run
 * twice at once or again after a crash: each step goes on from the cursor the last one left, so
 * no delivery is replayed twice by one recovery. Answers the state it ended in (undefined: no
 * such recovery).
 */
export async function runRecovery(
  recoveries: RecoveriesRepository,
  deliveryQueue: Queue,
  recoveryId: string,
  opts: { pageSize?: number; pauseMs?: number; onPage?: () => Promise<void> | void } = {},
): Promise<RecoveryState | undefined> {
  for (;;) {
    const step = await recoveries.step(recoveryId, opts.pageSize ?? RECOVERY_PAGE);
    if (!step) return undefined;
    for (const d of step.replayed) await enqueueDelivery(deliveryQueue, d, { replay: d.replays });
    if (step.state !== 'running') return step.state;
    await opts.onPage?.();
    if (opts.pauseMs) await new Promise((r) => setTimeout(r, opts.pauseMs));
  }
}
