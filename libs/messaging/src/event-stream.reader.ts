import type { RedisConnection } from '@app/platform/redis';
import { EVENT_GROUP, EventStreamKeys } from './event-stream';

/** A stream entry as `XREADGROUP` and `XCLAIM` return it. */
export type RawEntry = [id: string, fields: string[]];

/** How long one blocking read waits for new entries. */
const BLOCK_MS = 1_000;

/**
 * One consumer's membership in its stream's group and its blocking read of new entries, on a
 * connection of its own. On a single Redis the connection's client id is known (learned again on
 * every reconnection), so `interrupt` ends a blocked read at once; on a Cluster the read is on
 * whichever master holds the stream, and a read returns within its block time.
 */
export class StreamGroupReader {
  private clientId?: number;

  constructor(
    private readonly commands: RedisConnection,
    private readonly blocking: RedisConnection,
    private readonly keys: EventStreamKeys,
    private readonly consumer: string,
  ) {}

  /** Creates the group if it is not there (reading from the stream's start) and learns the reading connection's id. */
  async join(): Promise<void> {
    await this.ensureGroup();
    if ('isCluster' in this.blocking && this.blocking.isCluster) return;
    const learnId = async () => (this.clientId = await this.blocking.client('ID').catch(() => undefined));
    // A reconnection (Redis restarted) is a new client with a new id.
    this.blocking.on('ready', () => void learnId());
    await learnId();
  }

  /** The group again, after Redis lost its data (a restart without persistence) and the group with it. */
  async ensureGroup(): Promise<void> {
    try {
      await this.commands.xgroup('CREATE', this.keys.stream, EVENT_GROUP, '0', 'MKSTREAM');
    } catch (e) {
      if (!/BUSYGROUP/.test((e as Error).message)) throw e;
    }
  }

  /** Up to `count` entries never delivered to the group, waiting up to the block time for some. */
  async read(count: number): Promise<RawEntry[]> {
    const got = (await this.blocking.xreadgroup(
      'GROUP',
      EVENT_GROUP,
      this.consumer,
      'COUNT',
      count,
      'BLOCK',
      BLOCK_MS,
      'STREAMS',
      this.keys.stream,
      '>',
    )) as [string, RawEntry[]][] | null;
    return (got ?? []).flatMap(([, entries]) => entries);
  }

  /** Ends a blocked read as a timeout, so no entry is handed out and lost on the way (a single Redis only). */
  async interrupt(): Promise<void> {
    if (this.clientId !== undefined) await this.commands.client('UNBLOCK', this.clientId).catch(() => undefined);
  }

  disconnect(): void {
    this.blocking.disconnect();
  }

  /** Leaves the group if this consumer holds no entry, so the group does not fill with the names of the dead. */
  async leave(): Promise<void> {
    const { commands, keys, consumer } = this;
    const mine = await commands.xpending(keys.stream, EVENT_GROUP, '-', '+', 1, consumer);
    if (mine.length === 0) await commands.xgroup('DELCONSUMER', keys.stream, EVENT_GROUP, consumer);
  }
}
