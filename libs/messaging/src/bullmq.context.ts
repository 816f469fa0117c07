import { BaseRpcContext } from '@nestjs/microservices';
import type { Job } from 'bullmq';

/** `@Ctx()` in a handler: the BullMQ job (attempt count, id) behind the message. */
export class BullMqContext extends BaseRpcContext<[Job, string]> {
  getJob(): Job {
    return this.args[0];
  }

  getPattern(): string {
    return this.args[1];
  }
}
