import { ClientProxy, MsPattern, ReadPacket, WritePacket } from '@nestjs/microservices';
import { randomUUID } from 'node:crypto';
import { currentCorrelationId } from '@app/platform/correlation';
import { currentTraceparent } from '@app/platform/tracing';
import type { RedisTarget } from '@app/platform/env';
import { connectRedis, type RedisConnection } from '@app/platform/redis';
import { replyWaits } from '@app/platform/metrics';
import { ReplyTimeoutError, RemoteError, TransportUnavailableError } from './errors';
import { jobIdOf, JobEnvelope, ReplyMessage } from './job-envelope';
import { PartitionedQueue } from './partitioned-queue';
import { EventStreamPublisher } from './event-stream';

export interface BullMqClientOptions {
  /** One Redis server or a Redis Cluster (BaseConfig.redis). */
  connection: RedisTarget;
  /** BullMQ key prefix, so several deployments (or test runs) can share one Redis. */
  prefix?: string;
  /** How many partitions each pattern's queue is cut into (QUEUE_PARTITIONS); the workers must use the same. Default 1. */
  partitions?: number;
  /** How long `send` waits for the worker's reply. */
  replyTimeoutMs?: number;
  /**
   * Events (`emit`) published again under the same id within this many seconds are added once
   * (EVENT_DEDUP_WINDOW_S). Default 900; 0 adds every one.
   */
  eventDedupS?: number;
  /** How long a failed request job stays in Redis (capped at an hour: it may hold sealed card data). */
  keepFailedJobsS?: number;
}

interface Pending {
  pattern: string;
  callback: (packet: WritePacket) => void;
  timer: NodeJS.Timeout;
}

/**
 * Caller side of the transport. `send` = request/reply: one job on the pattern's queue, the
 * answer comes back on this client's own pub/sub channel (one SUBSCRIBE for all requests, instead
 * of BullMQ's QueueEvents stream per queue: far fewer Redis round trips per call). `emit` = a
 * durable event: one entry on the pattern's stream, which its consumer group reads and retries
 * (event-stream.ts).
 */
export class BullMqClient extends ClientProxy {
  private readonly prefix: string;
  private readonly replyTimeoutMs: number;
  private readonly replyChannel: string;
  private readonly keepFailedS: number;
  private readonly queues = new Map<string, PartitionedQueue>();
  private readonly pending = new Map<string, Pending>();
  private commands?: RedisConnection;
  private events?: EventStreamPublisher;
  private subscriber?: RedisConnection;
  private connecting?: Promise<void>;

  constructor(private readonly options: BullMqClientOptions) {
    super();
    this.prefix = options.prefix ?? 'gw';
    this.replyTimeoutMs = options.replyTimeoutMs ?? 10_000;
    this.replyChannel = `${this.prefix}-reply-${randomUUID()}`;
    this.keepFailedS = options.keepFailedJobsS ?? 7 * 24 * 3600;
  }

  /** Called by Nest before every send/emit: after the first call it is one resolved promise. */
  connect(): Promise<void> {
    this.connecting ??= this.open().catch((e) => {
      this.connecting = undefined;
      throw e;
    });
    return this.connecting;
  }

  private async open(): Promise<void> {
    // No offline queue and one retry: while Redis is down a send fails at once (HTTP 503)
    // instead of piling up requests that would all time out. Auto-pipelining stays off: with
    // BullMQ's scripts on this connection it costs more CPU than it saves
    // (docs/decisions/0004-no-auto-pipelining-on-the-queue-connection.md).
    // On a cluster the reply channel is a plain SUBSCRIBE too: a cluster passes every PUBLISH to
    // all its nodes, so the worker's reply reaches this client whichever node it listens on.
    this.commands = connectRedis(this.options.connection, { enableOfflineQueue: false, maxRetriesPerRequest: 1, lazyConnect: true });
    this.subscriber = connectRedis(this.options.connection, { lazyConnect: true });
    for (const conn of [this.commands, this.subscriber]) conn.on('error', () => undefined);
    this.subscriber.on('message', (_channel: string, message: string) => this.onReply(message));
    this.events = new EventStreamPublisher(this.commands, this.prefix, this.options.partitions ?? 1, this.options.eventDedupS ?? 900);
    await Promise.all([this.commands.connect(), this.subscriber.connect()]);
    await this.subscriber.subscribe(this.replyChannel);
  }

  async close(): Promise<void> {
    for (const id of [...this.pending.keys()]) clearTimeout(this.take(id)!.timer);
    await Promise.all([...this.queues.values()].map((q) => q.close()));
    this.queues.clear();
    this.subscriber?.disconnect();
    this.commands?.disconnect();
    this.connecting = undefined;
  }

  unwrap<T>(): T {
    return this.commands as T;
  }

  protected publish(packet: ReadPacket, callback: (packet: WritePacket) => void): () => void {
    const pattern = this.normalizePattern(packet.pattern as MsPattern);
    const jobId = jobIdOf(packet.data) ?? randomUUID();
    const timer = setTimeout(() => {
      if (this.take(jobId)) callback({ err: new ReplyTimeoutError(pattern, this.replyTimeoutMs), isDisposed: true });
    }, this.replyTimeoutMs);
    // A second send with the same job id takes over the wait (as before); the gauge counts it once.
    this.take(jobId);
    this.pending.set(jobId, { pattern, callback, timer });
    replyWaits.inc({ pattern });
    const envelope: JobEnvelope = { p: packet.data, r: this.replyChannel, c: currentCorrelationId(), t: currentTraceparent() };
    // Request jobs may hold sealed card data: gone from Redis as soon as they complete.
    this.queue(pattern)
      .of(jobId)
      .add(pattern, envelope, { jobId, removeOnComplete: true, removeOnFail: { age: Math.min(3600, this.keepFailedS) } })
      .catch((e) => {
        if (!this.take(jobId)) return;
        clearTimeout(timer);
        callback({ err: new TransportUnavailableError(pattern, e), isDisposed: true });
      });
    return () => {
      const p = this.take(jobId);
      if (p) clearTimeout(p.timer);
    };
  }

  /** Resolves true when the event was added, false when one with its id was added within the dedup window. */
  protected async dispatchEvent<T = unknown>(packet: ReadPacket): Promise<T> {
    const pattern = this.normalizePattern(packet.pattern as MsPattern);
    const envelope: JobEnvelope = { p: packet.data, c: currentCorrelationId(), t: currentTraceparent() };
    try {
      return (await this.events!.publish(pattern, jobIdOf(packet.data), envelope)) as T;
    } catch (e) {
      throw new TransportUnavailableError(pattern, e);
    }
  }

  private onReply(message: string): void {
    let reply: ReplyMessage;
    try {
      reply = JSON.parse(message) as ReplyMessage;
    } catch {
      return;
    }
    const p = this.take(reply.id);
    // A late reply (after its timeout) finds nothing to answer and is dropped.
    if (!p) return;
    clearTimeout(p.timer);
    p.callback(reply.err ? { err: new RemoteError(reply.err), isDisposed: true } : { response: reply.ok, isDisposed: true });
  }

  /** Ends the wait for a reply (answered, timed out, failed or disposed), keeping the reply-waits gauge true. */
  private take(jobId: string): Pending | undefined {
    const p = this.pending.get(jobId);
    if (!p) return undefined;
    this.pending.delete(jobId);
    replyWaits.dec({ pattern: p.pattern });
    return p;
  }

  private queue(pattern: string): PartitionedQueue {
    let q = this.queues.get(pattern);
    if (!q) {
      // One shared command connection for every queue (and partition) of this client.
      const placement = { connection: this.commands!, prefix: this.prefix, partitions: this.options.partitions };
      q = new PartitionedQueue(pattern, placement, { streams: { events: { maxLen: 1000 } } });
      this.queues.set(pattern, q);
    }
    return q;
  }
}
