import { Logger } from '@nestjs/common';
import type { RedisConnection } from '@app/platform/redis';
import { safeErrorText } from '@app/platform/safe-error';
import { EVENT_GROUP, EventStreamKeys } from './event-stream';

/**
 * Acknowledges and deletes the entries a consumer finished, batched: one `XACK` and one `XDEL`
 * for every entry finished in the same turn of the event loop. On a failure (Redis away) they are
 * tried again a second later, so an entry done is never run again for want of its acknowledgement
 * once Redis is back (until then it stays pending, renewed by nobody: a claim may run it again,
 * and the handlers' own keys make a second run change nothing).
 */
export class StreamAcks {
  private readonly logger = new Logger('EventStream');
  private readonly toAck: string[] = [];
  private flushing?: Promise<void>;
  private stopped = false;

  constructor(
    private readonly commands: RedisConnection,
    private readonly keys: EventStreamKeys,
  ) {}

  ack(entryId: string): void {
    this.toAck.push(entryId);
    this.flushing ??= new Promise<void>((r) => setImmediate(r)).then(() => this.flush());
  }

  /** Acknowledges what is left, once, and stops trying again later. */
  async close(): Promise<void> {
    this.stopped = true;
    await this.flush();
  }

  private async flush(): Promise<void> {
    this.flushing = undefined;
    const ids = this.toAck.splice(0);
    if (ids.length === 0) return;
    const { commands, keys } = this;
    try {
      await Promise.all([commands.xack(keys.stream, EVENT_GROUP, ...ids), commands.xdel(keys.stream, ...ids)]);
    } catch (e) {
      this.logger.warn(`${keys.name}: ${ids.length} events done but not acknowledged yet: ${safeErrorText(e)}`);
      this.toAck.push(...ids);
      if (!this.stopped) this.flushing ??= sleep(1_000).then(() => this.flush());
    }
  }
}

/**
 * The dead letters of one event stream: entries given up on, kept with why for `keepDeadS` (they
 * hold the event's payload: nothing is kept longer than promised), listed and replayed by the
 * console (event-stream.ts).
 */
export class StreamDeadLetters {
  private readonly logger = new Logger('EventStream');

  constructor(
    private readonly commands: RedisConnection,
    private readonly keys: EventStreamKeys,
    private readonly keepDeadS: number,
  ) {}

  /** Moves an entry to the dead letters with why, then acknowledges and deletes it. */
  async add(entryId: string, fields: string[], deliveries: number, reason: string): Promise<void> {
    const { commands, keys } = this;
    await commands.xadd(
      keys.dead,
      'MINID',
      this.keptFrom(),
      '*',
      ...fields,
      'entry',
      entryId,
      'deliveries',
      String(deliveries),
      'reason',
      reason,
    );
    await commands.xack(keys.stream, EVENT_GROUP, entryId);
    await commands.xdel(keys.stream, entryId);
    this.logger.error(`${keys.name} ${entryId}: gave up after ${deliveries} deliveries (${reason}); kept in ${keys.dead}`);
  }

  /** Dead letters past their keeping time go. */
  async trim(): Promise<void> {
    await this.commands.xtrim(this.keys.dead, 'MINID', this.keptFrom());
  }

  private keptFrom(): string {
    return String(Date.now() - this.keepDeadS * 1000);
  }
}

export const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms).unref());
