import { CustomTransportStrategy, MessageHandler, Server } from '@nestjs/microservices';
import { hostname } from 'node:os';
import { randomUUID } from 'node:crypto';
import { Job, Queue, Worker } from 'bullmq';
import { lastValueFrom } from 'rxjs';
import { failSpan } from '@app/platform/tracing';
import { jobsProcessed } from '@app/platform/metrics';
import { inJobSpan } from './job-span';
import { BullMqContext, EventContext } from './bullmq.context';
import { eventStreamKeys } from './event-stream';
import { DEFAULT_EVENT_RETRY, EventEntry, EventRetryPolicy, EventStreamConsumer } from './event-stream.consumer';
import { JobEnvelope, RemoteErrorPayload, ReplyMessage } from './job-envelope';
import { partitionOn, splitConcurrency } from './queue-keys';
import type { RedisTarget } from '@app/platform/env';
import { BULLMQ_RECONNECT, closeRedis, connectRedis, type RedisConnection } from '@app/platform/redis';
import { QueueDepthReader } from './queue-metrics';
import { safeError, safeErrorText } from '@app/platform/safe-error';

export interface BullMqServerOptions {
  /** One Redis server or a Redis Cluster (BaseConfig.redis). */
  connection: RedisTarget;
  prefix?: string;
  /** How many partitions each pattern's queue is cut into (QUEUE_PARTITIONS); the callers must use the same. Default 1. */
  partitions?: number;
  /** Patterns this worker must serve; it refuses to start if one has no handler. */
  requiredPatterns: string[];
  /** Worker concurrency per pattern (jobs in flight at once in this process). */
  concurrency?: Record<string, number>;
  defaultConcurrency?: number;
  /** More queues whose depth this worker's /metrics exports, beside the ones it consumes here (e.g. the notifier's delivery queue). */
  observeQueues?: string[];
  /** How events are retried and when they are given up on (DEFAULT_EVENT_RETRY where unset). */
  eventRetry?: Partial<EventRetryPolicy>;
}

/** Nest types message handlers `any` in and out; this transport only passes their input and result on, so `unknown` is enough. */
type JobHandler = MessageHandler<unknown, BullMqContext | EventContext, unknown>;

/** How often a worker looks for event jobs queued the old way (see drainOldQueue). */
const OLD_QUEUE_CHECK_MS = 30_000;

const INTERNAL: RemoteErrorPayload = {
  kind: 'unavailable',
  code: '503',
  message: 'The worker could not process the request; retry later.',
};

/**
 * Worker side of the transport. Requests: one BullMQ Worker per pattern and partition (so each
 * pattern scales and drains on its own, and N replicas compete for the same queue). Events: one
 * consumer per pattern and partition in the pattern's consumer group on its stream
 * (event-stream.consumer.ts), N replicas sharing the group.
 */
export class BullMqServer extends Server implements CustomTransportStrategy {
  private readonly workers: Worker[] = [];
  private readonly consumers: EventStreamConsumer[] = [];
  /** Per old event queue (partition) not being drained yet: a check that starts its drain when it holds jobs. */
  private readonly oldQueues = new Map<string, () => Promise<boolean>>();
  private oldQueueTimer?: NodeJS.Timeout;
  private publisher?: RedisConnection;
  /** The event streams' commands and the queue depth reads. */
  private streams?: RedisConnection;
  /** What each worker's connections are copied from (BullMQ duplicates it; never used itself). */
  private template?: RedisConnection;
  private depth?: QueueDepthReader;

  constructor(private readonly options: BullMqServerOptions) {
    super();
  }

  async listen(callback: (err?: unknown) => void): Promise<void> {
    try {
      const missing = this.options.requiredPatterns.filter((p) => !this.messageHandlers.has(p));
      if (missing.length > 0) throw new Error(`no handler for pattern(s): ${missing.join(', ')}`);
      this.publisher = connectRedis(this.options.connection, { enableAutoPipelining: true });
      this.publisher.on('error', () => undefined);
      // Without auto-pipelining: on a cluster it routes a command by its first argument, which for
      // XGROUP and XINFO is the subcommand, not the key (a MOVED it does not follow).
      this.streams = connectRedis(this.options.connection);
      this.streams.on('error', () => undefined);
      // Workers block on their queue: commands retry until Redis answers, as BullMQ requires.
      const template = connectRedis(this.options.connection, {
        maxRetriesPerRequest: null,
        lazyConnect: true,
        retryStrategy: BULLMQ_RECONNECT,
      });
      this.template = template;
      template.on('error', () => undefined);
      const events: string[] = [];
      for (const [pattern, handler] of this.messageHandlers as Map<string, JobHandler>) {
        if (!handler.isEventHandler) this.consume(pattern, handler, template);
        else {
          events.push(pattern);
          await this.consumeEvents(pattern, handler, template);
        }
      }
      await Promise.all(this.workers.map((w) => w.waitUntilReady()));
      // An old publisher still running in a rolling upgrade may queue event jobs after this start.
      if (this.oldQueues.size > 0) this.oldQueueTimer = setInterval(() => void this.checkOldQueues(), OLD_QUEUE_CHECK_MS);
      // The depth of what this worker consumes, for autoscaling (read on the replies' connection, at scrape time).
      this.depth = new QueueDepthReader({
        connection: this.streams,
        prefix: this.options.prefix ?? 'gw',
        queues: [...this.messageHandlers.keys()],
        events,
        partitions: this.options.partitions,
        observeQueues: this.options.observeQueues,
      });
      callback();
    } catch (e) {
      callback(e);
    }
  }

  /** Waits for in-flight jobs to finish: a SIGTERM never cuts a job in half. */
  async close(): Promise<void> {
    clearInterval(this.oldQueueTimer);
    await Promise.all([...this.workers.map((w) => w.close()), ...this.consumers.map((c) => c.close())]);
    this.workers.length = 0;
    this.consumers.length = 0;
    await this.depth?.close();
    await Promise.all([this.publisher && closeRedis(this.publisher), this.streams && closeRedis(this.streams)]);
    this.template?.disconnect();
  }

  /** How many of the pattern's jobs or events this process handles at once, over all its partitions. */
  private concurrencyOf(pattern: string): number {
    return this.options.concurrency?.[pattern] ?? this.options.defaultConcurrency ?? 16;
  }

  /** One Worker per partition of the pattern's queue, sharing the pattern's concurrency between them. */
  private consume(pattern: string, handler: JobHandler, template: RedisConnection): void {
    const partitions = this.options.partitions ?? 1;
    const shares = splitConcurrency(this.concurrencyOf(pattern), partitions);
    for (let i = 0; i < partitions; i++) {
      const { name, ...keys } = partitionOn(template, this.options.prefix ?? 'gw', pattern, i, partitions);
      const worker = new Worker(name, (job: Job<JobEnvelope>) => this.process(pattern, handler, job), {
        ...keys,
        concurrency: shares[i],
        // Jobs are short: a crashed worker's lock lapses after lockDuration and the stalled
        // check (every stalledInterval) hands its jobs to another worker within ~25 s.
        lockDuration: 10_000,
        stalledInterval: 15_000,
        maxStalledCount: 2,
      });
      worker.on('error', (e) => {
        this.logger.error(`worker ${name}: ${safeErrorText(e)}`);
      });
      this.workers.push(worker);
    }
  }

  /** One consumer per partition of the pattern's event stream, sharing the pattern's concurrency between them. */
  private async consumeEvents(pattern: string, handler: JobHandler, template: RedisConnection): Promise<void> {
    const partitions = this.options.partitions ?? 1;
    const prefix = this.options.prefix ?? 'gw';
    const shares = splitConcurrency(this.concurrencyOf(pattern), partitions);
    const retry = { ...DEFAULT_EVENT_RETRY, ...this.options.eventRetry };
    const me = `${hostname()}-${process.pid}-${randomUUID().slice(0, 8)}`;
    for (let i = 0; i < partitions; i++) {
      const keys = eventStreamKeys(this.streams!, prefix, pattern, i, partitions);
      const consumer = new EventStreamConsumer({
        keys,
        commands: this.streams!,
        // Its own connection for the blocking read; Redis down is the read loop's to report.
        blocking: template.duplicate().on('error', () => undefined),
        consumer: `${me}-${i}`,
        concurrency: shares[i],
        retry,
        handle: (entry) => this.processEvent(pattern, keys.name, handler, entry),
      });
      await consumer.start();
      this.consumers.push(consumer);
      const { name } = partitionOn(template, prefix, pattern, i, partitions);
      this.oldQueues.set(name, () => this.drainOldQueue(pattern, handler, template, i, partitions));
    }
    await this.checkOldQueues();
  }

  /** Starts a drain for each old event queue that holds jobs now; one that fails to be read is tried at the next check. */
  private async checkOldQueues(): Promise<void> {
    for (const [name, check] of this.oldQueues) {
      const started = await check().catch((e) => {
        this.logger.warn(`${name}: could not look for old event jobs: ${safeErrorText(e)}`);
        return false;
      });
      if (started) this.oldQueues.delete(name);
    }
  }

  /**
   * Events published before they moved to streams (by this version's predecessor, still running
   * during a rolling upgrade) wait in the pattern's BullMQ queue: a Worker drains them, with their
   * retries, once some are there, so an upgrade loses none. Looked for at start and every
   * OLD_QUEUE_CHECK_MS: one script call per partition.
   */
  private async drainOldQueue(
    pattern: string,
    handler: JobHandler,
    template: RedisConnection,
    i: number,
    partitions: number,
  ): Promise<boolean> {
    const { name, ...keys } = partitionOn(template, this.options.prefix ?? 'gw', pattern, i, partitions);
    const queue = new Queue(name, { ...keys, connection: this.publisher! }).on('error', () => undefined);
    try {
      const counts = await queue.getJobCounts('waiting', 'active', 'delayed', 'prioritized');
      if (Object.values(counts).every((n) => n === 0)) return false;
      this.logger.log(`${name}: draining ${JSON.stringify(counts)} event jobs queued before events moved to streams`);
      const worker = new Worker(name, (job: Job<JobEnvelope>) => this.process(pattern, handler, job), {
        ...keys,
        concurrency: this.concurrencyOf(pattern),
        lockDuration: 10_000,
      });
      worker.on('error', (e) => {
        this.logger.error(`worker ${name}: ${safeErrorText(e)}`);
      });
      this.workers.push(worker);
      return true;
    } finally {
      await queue.close();
    }
  }

  private processEvent(pattern: string, partition: string, handler: JobHandler, entry: EventEntry): Promise<void> {
    const queuedAt = entry.attempt === 1 ? Number(entry.entryId.split('-')[0]) : undefined;
    return inJobSpan(pattern, entry.envelope, queuedAt, entry.attempt, async () => {
      try {
        const context = new EventContext([entry, pattern, partition]);
        await lastValueFrom(this.transformToObservable(await handler(entry.envelope.p, context)), { defaultValue: undefined });
        jobsProcessed.inc({ pattern, outcome: 'ok' });
      } catch (e) {
        jobsProcessed.inc({ pattern, outcome: 'retry' });
        throw e;
      }
    });
  }

  on(): void {
    throw new Error('BullMqServer does not expose events');
  }

  unwrap<T>(): T {
    return this.workers as T;
  }

  private process(pattern: string, handler: JobHandler, job: Job<JobEnvelope>): Promise<unknown> {
    const context = new BullMqContext([job, pattern]);
    const queuedAt = job.attemptsMade === 0 && !job.stalledCounter ? job.timestamp : undefined;
    return inJobSpan(pattern, job.data, queuedAt, job.attemptsMade + 1, async () => {
      this.logger.debug?.(`job ${pattern} ${job.id} attempt ${job.attemptsMade + 1}`);
      if (handler.isEventHandler) {
        // An event handler's failure fails the job, so BullMQ retries it with backoff.
        try {
          const done = await lastValueFrom(this.transformToObservable(await handler(job.data.p, context)), { defaultValue: undefined });
          jobsProcessed.inc({ pattern, outcome: 'ok' });
          return done;
        } catch (e) {
          jobsProcessed.inc({ pattern, outcome: 'retry' });
          // BullMQ keeps a failed job's reason and stack in Redis: only the safe form goes there.
          throw Object.assign(new Error(safeErrorText(e)), { stack: safeError(e).stack });
        }
      }
      const reply = await this.answer(handler, job, context);
      jobsProcessed.inc({ pattern, outcome: reply.err ? 'error_reply' : 'ok' });
      if (job.data.r) await this.publisher!.publish(job.data.r, JSON.stringify(reply));
      // The job's return value stays out of Redis: the reply channel carried it.
      return undefined;
    });
  }

  /**
   * A request always completes with an answer: a domain failure is an answer too, and retrying
   * it would not change it (and the caller has stopped waiting by the time a retry ran).
   */
  private async answer(handler: JobHandler, job: Job<JobEnvelope>, context: BullMqContext): Promise<ReplyMessage> {
    try {
      const ok = await lastValueFrom(this.transformToObservable(await handler(job.data.p, context)), { defaultValue: undefined });
      return { id: job.id!, ok };
    } catch (e) {
      if (isRemoteErrorPayload(e)) return { id: job.id!, err: e };
      failSpan(e);
      return { id: job.id!, err: INTERNAL };
    }
  }
}

function isRemoteErrorPayload(e: unknown): e is RemoteErrorPayload {
  const p = e as RemoteErrorPayload;
  return typeof p === 'object' && p !== null && typeof p.kind === 'string' && typeof p.code === 'string' && typeof p.message === 'string';
}
