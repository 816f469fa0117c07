import { BaseRpcContext } from '@nestjs/microservices';
import type { Job } from 'bullmq';
import type { EventEntry } from './event-stream.consumer';

/** `@Ctx()` in a handler: the BullMQ job behind the message, and its delivery facts. */
export class BullMqContext extends BaseRpcContext<[Job, string]> {
  getJob(): Job {
    return this.args[0];
  }

  getPattern(): string {
    return this.args[1];
  }

  /** Which attempt this is, from 1: one more than the attempts that failed before it. */
  attempt(): number {
    return this.getJob().attemptsMade + 1;
  }

  /** The message was never handed out before: no earlier attempt started, failed or stalled. */
  isFirstDelivery(): boolean {
    const job = this.getJob();
    return job.attemptsStarted <= 1 && job.attemptsMade === 0 && !job.stalledCounter;
  }
}

/** `@Ctx()` in an event handler: the stream entry behind the event, and its delivery facts. */
export class EventContext extends BaseRpcContext<[EventEntry, string, string]> {
  getEntry(): EventEntry {
    return this.args[0];
  }

  getPattern(): string {
    return this.args[1];
  }

  /** The partition the event came from (`<pattern>` or `<pattern>#<i>`). */
  getPartition(): string {
    return this.args[2];
  }

  /** Which attempt this is, from 1. */
  attempt(): number {
    return this.getEntry().attempt;
  }
}
