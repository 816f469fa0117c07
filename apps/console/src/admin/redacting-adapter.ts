import { BullMQAdapter } from '@bull-board/api/bullMQAdapter';
import type { Job, Queue } from 'bullmq';
import { maskCardLike } from '@app/operators';

/** What bull-board reads of a failure (its `formatJob` takes both from `job.toJSON()`). */
export interface FailureFields {
  failedReason?: string | null;
  stacktrace?: string[] | null;
}

/**
 * A failure as the dashboard may show it. A job's failedReason is its error's message, which
 * could quote what was sent; bull-board's setFormatter covers data, returnValue and name only, so
 * this is applied to the job itself (see RedactingBullMQAdapter).
 *
 * - card-bearing queues: the message is replaced by the error's class (read from the first line
 *   of the stack, "TypeError: …"), and each stack keeps only its "at …" frames;
 * - the others: card-like digit runs and credentials masked (maskCardLike), as in the audit trail.
 */
export function redactFailure<T extends FailureFields>(job: T, cardBearing: boolean): T {
  const stacks = Array.isArray(job.stacktrace) ? job.stacktrace.filter((s): s is string => typeof s === 'string') : job.stacktrace;
  if (!cardBearing) {
    return {
      ...job,
      // null once a retry has cleared it (bull-board reads the job again after job.retry()).
      failedReason: typeof job.failedReason === 'string' ? maskCardLike(job.failedReason) : job.failedReason,
      stacktrace: Array.isArray(stacks) ? stacks.map(maskCardLike) : stacks,
    };
  }
  const classOf = (stack: string | undefined): string => /^([A-Za-z_$][\w$.]{0,63})(?::|$)/.exec(stack ?? '')?.[1] ?? 'Error';
  const framesOf = (stack: string): string =>
    [`${classOf(stack)}: [message hidden: card-bearing queue]`, ...stack.split('\n').filter((l) => /^\s+at /.test(l))]
      .map(maskCardLike)
      .join('\n');
  return {
    ...job,
    failedReason:
      typeof job.failedReason === 'string'
        ? `${classOf(stacks?.[stacks.length - 1])} (message hidden: card-bearing queue)`
        : job.failedReason,
    stacktrace: Array.isArray(stacks) ? stacks.map(framesOf) : stacks,
  };
}

/**
 * bull-board's BullMQ adapter whose jobs answer `toJSON()` (all bull-board shows of a job) with
 * the failure redacted by redactFailure. The Job instances are the ones BullMQ made for this read,
 * so retrying one still works on the real job.
 */
export class RedactingBullMQAdapter extends BullMQAdapter {
  constructor(
    queue: Queue,
    options: ConstructorParameters<typeof BullMQAdapter>[1],
    private readonly cardBearing: boolean,
  ) {
    super(queue, options);
  }

  override async getJob(id: string): Promise<Job | undefined> {
    const job = await super.getJob(id);
    return job ? this.redacted(job) : job;
  }

  override async getJobs(...args: Parameters<BullMQAdapter['getJobs']>): Promise<Job[]> {
    return (await super.getJobs(...args)).map((job) => this.redacted(job));
  }

  private redacted(job: Job): Job {
    const toJSON = job.toJSON.bind(job);
    job.toJSON = () => redactFailure(toJSON() as ReturnType<Job['toJSON']> & FailureFields, this.cardBearing);
    return job;
  }
}
