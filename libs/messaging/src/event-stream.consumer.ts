import { Logger } from '@nestjs/common';
import type { RedisConnection } from '@app/platform/redis';
import { safeErrorText } from '@app/platform/safe-error';
import { ENTRY_ENVELOPE_FIELD, ENTRY_ID_FIELD, EVENT_GROUP, EventStreamKeys, fieldMap } from './event-stream';
import { sleep, StreamAcks, StreamDeadLetters } from './event-stream.acks';
import { RawEntry, StreamGroupReader } from './event-stream.reader';
import { type StreamScripts, withStreamScripts } from './event-stream.scripts';
import type { JobEnvelope } from './job-envelope';

/** How an event stream's entries are retried and when they are given up on. */
export interface EventRetryPolicy {
  /** Deliveries an entry gets before it goes to the dead letters (the first included). Default 10. */
  attempts: number;
  /** The wait before the n-th retry is backoffMs × 2^(n-1). Default 1 000. */
  backoffMs: number;
  /**
   * An entry delivered and left unacknowledged this long, while no live handler renews it, is
   * taken by another consumer: its consumer died. Handlers renew theirs every third of it. Default 10 000.
   */
  stallMs: number;
  /** How often a consumer looks for entries due for a retry or left by a dead consumer. Default 1 000. */
  claimIntervalMs: number;
  /** How long the dead letters are kept. Default 7 days. */
  keepDeadS: number;
}

export const DEFAULT_EVENT_RETRY: EventRetryPolicy = {
  attempts: 10,
  backoffMs: 1_000,
  stallMs: 10_000,
  claimIntervalMs: 1_000,
  keepDeadS: 7 * 24 * 3600,
};

export interface EventEntry {
  /** The stream entry's id. */
  entryId: string;
  /** The event's own id (the outbox row's), when it was published with one. */
  eventId: string;
  envelope: JobEnvelope;
  /** Which delivery this is, from 1. */
  attempt: number;
}

export interface EventStreamConsumerOptions {
  keys: EventStreamKeys;
  /** For acknowledgements, claims and dead letters (never blocks). */
  commands: RedisConnection;
  /** This consumer's own connection for the blocking read. */
  blocking: RedisConnection;
  /** This consumer's name in the group (unique per process and partition). */
  consumer: string;
  /** Entries in a handler at once. */
  concurrency: number;
  retry: EventRetryPolicy;
  handle: (entry: EventEntry) => Promise<void>;
}

/** How often the dead letters past their keeping time are trimmed, in claim passes. */
const TRIM_EVERY_PASSES = 60;

/**
 * One partition of one event pattern, as one member of its consumer group. It reads new entries
 * with a blocking `XREADGROUP`, runs them, and acknowledges and deletes each one its handler
 * finished (batched: one `XACK` and one `XDEL` per burst). A failed entry stays pending and runs
 * again here after its backoff; after `attempts` deliveries it goes to the dead letters. Entries
 * in a handler or waiting for a retry count against `concurrency` (a replica in trouble stops
 * reading, and leaves the rest to the others) and are renewed while still this consumer's, so
 * another consumer takes over only a stalled or dead consumer's entries (the claim pass, for
 * entries idle longer than `stallMs`).
 */
export class EventStreamConsumer {
  private readonly logger = new Logger('EventStream');
  private readonly scripts: StreamScripts;
  private readonly inflight = new Map<string, Promise<void>>();
  /** Failed entries waiting out their backoff here: renewed like the ones in a handler, retried by this consumer. */
  private readonly held = new Map<string, NodeJS.Timeout>();
  /** Entries in a handler here that another consumer took over (this one stalled): not retried here. */
  private readonly lost = new Set<string>();
  private readonly acks: StreamAcks;
  private readonly dead: StreamDeadLetters;
  private readonly reader: StreamGroupReader;
  private stopped = false;
  private wake?: () => void;
  private reading?: Promise<void>;
  private claiming?: Promise<void>;
  private claimTimer?: NodeJS.Timeout;
  private renewTimer?: NodeJS.Timeout;
  /** Where the next claim pass looks in the pending list, so entries not due yet never hide the ones behind them. */
  private claimCursor = '-';
  private passes = 0;

  constructor(private readonly o: EventStreamConsumerOptions) {
    this.scripts = withStreamScripts(o.commands);
    this.acks = new StreamAcks(o.commands, o.keys);
    this.dead = new StreamDeadLetters(o.commands, o.keys, o.retry.keepDeadS);
    this.reader = new StreamGroupReader(o.commands, o.blocking, o.keys, o.consumer);
  }

  /** Creates the group (reading from the stream's start) and starts reading. */
  async start(): Promise<void> {
    await this.reader.join();
    this.reading = this.readLoop();
    this.scheduleClaim();
    this.renewTimer = setInterval(() => void this.renew(), Math.max(100, Math.floor(this.o.retry.stallMs / 3)));
  }

  /** Stops reading, waits for the entries in hand, acknowledges them, and leaves the group if it holds nothing. */
  async close(): Promise<void> {
    this.stopped = true;
    clearTimeout(this.claimTimer);
    clearInterval(this.renewTimer);
    // Entries waiting for a retry stay pending: another consumer takes them once they go stale.
    for (const timer of this.held.values()) clearTimeout(timer);
    this.held.clear();
    this.wake?.();
    // A blocked read ends at once where it can be interrupted, else within its block time; past that the connection goes.
    await this.reader.interrupt();
    const late = await Promise.race([Promise.all([this.reading, this.claiming]).then(() => false), sleep(2_000).then(() => true)]);
    if (late) this.reader.disconnect();
    await Promise.allSettled([...this.inflight.values()]);
    await this.acks.close();
    this.reader.disconnect();
    await this.reader.leave().catch(() => undefined);
  }

  private get busy(): number {
    return this.inflight.size + this.held.size;
  }

  private async readLoop(): Promise<void> {
    while (!this.stopped) {
      const room = this.o.concurrency - this.busy;
      if (room <= 0) {
        await new Promise<void>((r) => (this.wake = r));
        continue;
      }
      try {
        for (const raw of await this.reader.read(room)) this.run(raw, 1);
      } catch (e) {
        if (this.stopped) return;
        // Redis lost its data (a restart without persistence): the group goes with it.
        if (/NOGROUP/.test((e as Error).message)) await this.reader.ensureGroup().catch(() => undefined);
        else this.logger.warn(`${this.o.keys.name}: reading events paused: ${safeErrorText(e)}`);
        await sleep(500);
      }
    }
  }

  private run([entryId, fields]: RawEntry, attempt: number): void {
    const f = fieldMap(fields);
    let envelope: JobEnvelope | undefined;
    try {
      envelope = JSON.parse(f[ENTRY_ENVELOPE_FIELD] ?? '') as JobEnvelope;
    } catch {
      envelope = undefined;
    }
    if (typeof envelope !== 'object' || envelope === null || !('p' in envelope)) {
      void this.dead.add(entryId, fields, attempt, 'the entry holds no event envelope').catch(() => undefined);
      return;
    }
    const entry: EventEntry = { entryId, eventId: f[ENTRY_ID_FIELD] ?? '', envelope, attempt };
    const done = Promise.resolve()
      .then(() => this.o.handle(entry))
      .then(
        () => this.acks.ack(entryId),
        (e) => {
          if (this.lost.has(entryId)) return; // another consumer has it now, and retries it there
          const last = attempt >= this.o.retry.attempts;
          this.logger.warn(`${this.o.keys.name} ${entryId} attempt ${attempt} failed${last ? ' (the last)' : ''}: ${safeErrorText(e)}`);
          if (last) return this.dead.add(entryId, fields, attempt, safeErrorText(e)).catch(() => undefined);
          this.retryLater(entryId, attempt);
        },
      )
      .finally(() => {
        this.inflight.delete(entryId);
        this.lost.delete(entryId);
        this.wake?.();
      });
    this.inflight.set(entryId, done);
  }

  /**
   * Keeps a failed entry pending and runs it again after its backoff, claimed anew (if still this
   * consumer's) so that its delivery count stays the number of attempts.
   */
  private retryLater(entryId: string, attempt: number): void {
    if (this.stopped) return;
    const timer = setTimeout(() => {
      if (this.stopped || !this.held.delete(entryId)) return;
      // Counted in `held` until now: moving it to `inflight` keeps the total within concurrency.
      this.inflight.set(entryId, Promise.resolve());
      void this.scripts
        .gwClaimOwned(this.o.keys.stream, EVENT_GROUP, this.o.consumer, '0', entryId)
        .then((claimed) => {
          this.inflight.delete(entryId);
          const raw = (claimed as RawEntry[])[0];
          if (raw && !this.stopped) this.run(raw, attempt + 1);
        })
        // Not claimed (Redis away): it stays pending, and a claim pass takes it once it goes stale.
        .catch(() => this.inflight.delete(entryId))
        .finally(() => this.wake?.());
    }, this.backoff(attempt));
    this.held.set(entryId, timer);
  }

  /** The wait after the n-th failed delivery: backoffMs × 2^(n-1). */
  private backoff(deliveries: number): number {
    return this.o.retry.backoffMs * 2 ** Math.max(0, deliveries - 1);
  }

  /** Resets the idle time of the entries in hand that are still this consumer's; the others are marked lost. */
  private async renew(): Promise<void> {
    const ids = [...this.inflight.keys(), ...this.held.keys()];
    if (ids.length === 0) return;
    try {
      const kept = new Set((await this.scripts.gwClaimOwned(this.o.keys.stream, EVENT_GROUP, this.o.consumer, '1', ...ids)) as string[]);
      for (const id of ids) {
        if (kept.has(id)) continue;
        if (this.inflight.has(id)) this.lost.add(id);
        const timer = this.held.get(id);
        if (timer) {
          clearTimeout(timer);
          this.held.delete(id);
          this.wake?.();
        }
      }
    } catch {
      // Redis away: nothing to renew against; entries go stale only if it stays away past stallMs.
    }
  }

  private scheduleClaim(): void {
    if (this.stopped) return;
    const { claimIntervalMs } = this.o.retry;
    this.claimTimer = setTimeout(
      () => {
        this.claiming = this.claim()
          .catch((e) => this.logger.warn(`${this.o.keys.name}: claim pass failed: ${safeErrorText(e)}`))
          .finally(() => this.scheduleClaim());
      },
      claimIntervalMs * (0.75 + Math.random() / 2),
    );
  }

  /**
   * Takes the pending entries due again that no live consumer renews: a retry whose backoff has
   * passed on a consumer that died, or an entry a dead consumer was running. It may take one entry
   * past `concurrency`, so a backlog of new entries never keeps a dead consumer's from running.
   */
  private async claim(): Promise<void> {
    const { commands, keys, retry } = this.o;
    if (++this.passes % TRIM_EVERY_PASSES === 0) await this.dead.trim();
    if (this.busy > this.o.concurrency) return;
    const pending = (await commands.xpending(keys.stream, EVENT_GROUP, 'IDLE', retry.stallMs, this.claimCursor, '+', 100)) as [
      string,
      string,
      number,
      number,
    ][];
    this.claimCursor = pending.length === 100 ? `(${pending[pending.length - 1][0]}` : '-';
    for (const [entryId, , idle, deliveries] of pending) {
      if (this.stopped || this.busy > this.o.concurrency) return;
      if (this.inflight.has(entryId) || this.held.has(entryId)) continue;
      const due = Math.max(retry.stallMs, this.backoff(deliveries));
      if (idle < due) continue;
      // The same idle bound in the claim: of two consumers claiming at once, one gets it.
      const claimed = (await commands.xclaim(keys.stream, EVENT_GROUP, this.o.consumer, due, entryId)) as (RawEntry | null)[];
      const raw = claimed[0];
      if (!raw) continue;
      if (deliveries >= retry.attempts) await this.dead.add(entryId, raw[1], deliveries, `no attempt left after ${deliveries} deliveries`);
      else if (this.stopped)
        return; // claimed, not run: it stays pending for another consumer
      else this.run(raw, deliveries + 1);
    }
  }
}
