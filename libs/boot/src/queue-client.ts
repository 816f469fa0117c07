import { BullMqClient } from '@app/messaging';
import type { BaseConfig } from '@app/platform';

/** The transport's caller side, configured the same way in every app that sends or emits. */
export function queueClient(base: BaseConfig, replyTimeoutMs?: number): BullMqClient {
  return new BullMqClient({
    connection: base.redis,
    prefix: base.queuePrefix,
    partitions: base.queuePartitions,
    replyTimeoutMs,
    eventDedupS: base.eventDedupS,
    keepFailedJobsS: base.keepFailedJobsS,
  });
}
