import type { RedisConnection } from '@app/platform/redis';
import type { JobEnvelope } from './job-envelope';
import { partitionIndex, partitionOn } from './queue-keys';
import { ENTRY_ENVELOPE_FIELD, ENTRY_ID_FIELD, withStreamScripts, type StreamScripts } from './event-stream.scripts';

/**
 * Durable events travel on Redis streams, one per event pattern (and partition), each read by one
 * consumer group: the app that handles the pattern. An event costs one `XADD` and a share of a
 * batched `XREADGROUP`, `XACK` and `XDEL`, where a BullMQ job cost some 55 commands
 * (docs/decisions/0012-a-sale-with-fewer-crossings.md).
 */
export interface EventStreamKeys {
  /** The partition's name as the queue of old had it (`<pattern>` or `<pattern>#<i>`): the label its metrics carry. */
  name: string;
  /** The stream the events are added to and the group reads. */
  stream: string;
  /** Where an event goes once its attempts ran out: kept for an operator, with the reason. */
  dead: string;
  /** The marker of an event id seen within the dedup window (same slot as the stream). */
  seen: (id: string) => string;
}

/** The consumer group that reads a pattern's stream: one app handles each event pattern. */
export const EVENT_GROUP = 'workers';

export { ENTRY_ENVELOPE_FIELD, ENTRY_ID_FIELD };

/**
 * The keys of one partition of a pattern's stream. They sit beside the BullMQ queue of the same
 * name, under the same prefix (and, on a cluster, the same hash tag), so a partition's keys share
 * one slot and partitions spread over the masters as the queues do.
 */
export function eventStreamKeys(
  connection: RedisConnection,
  prefix: string,
  pattern: string,
  index: number,
  partitions: number,
): EventStreamKeys {
  const { name, prefix: keyPrefix } = partitionOn(connection, prefix, pattern, index, partitions);
  const base = `${keyPrefix}:${name}`;
  return { name, stream: `${base}:stream`, dead: `${base}:dead`, seen: (id) => `${base}:seen:${id}` };
}

/** The caller side: adds events to their pattern's stream, in the partition their id picks. */
export class EventStreamPublisher {
  private next = 0;
  private readonly scripts: StreamScripts;

  constructor(
    private readonly connection: RedisConnection,
    private readonly prefix: string,
    private readonly partitions: number,
    /** The dedup window in seconds; 0 adds every event, even one seen a moment ago. */
    private readonly dedupS: number,
  ) {
    this.scripts = withStreamScripts(connection);
  }

  /** Resolves true when the event was added, false when an event with its id was added within the window. */
  async publish(pattern: string, id: string | undefined, envelope: JobEnvelope): Promise<boolean> {
    const index = id === undefined ? this.next++ % this.partitions : partitionIndex(id, this.partitions);
    const keys = eventStreamKeys(this.connection, this.prefix, pattern, index, this.partitions);
    const dedup = id === undefined ? '0' : String(this.dedupS);
    const added = await this.scripts.gwPublishEvent(
      keys.stream,
      id === undefined ? keys.stream : keys.seen(id),
      dedup,
      id ?? '',
      JSON.stringify(envelope),
    );
    return added === 1;
  }
}

/** How far behind a stream's group is, in the terms the queue gauges use. */
export interface StreamDepth {
  /** Entries not yet delivered to the group. */
  waiting: number;
  /** Entries delivered and not acknowledged: in a handler now, or waiting for their retry. */
  active: number;
  /** Entries whose attempts ran out, kept for an operator. */
  failed: number;
  /** How long the oldest undelivered entry has waited, in seconds (0 when none waits). */
  oldestWaitingAgeS: number;
}

/** The ms timestamp a stream entry id starts with. */
export const entryTime = (id: string): number => Number(id.slice(0, id.indexOf('-')));

/** Reads one partition's depth: the group's lag and pending count, the dead letters, the oldest undelivered entry. */
export async function streamDepth(connection: RedisConnection, keys: EventStreamKeys): Promise<StreamDepth> {
  const [groups, length, failed] = await Promise.all([
    connection.xinfo('GROUPS', keys.stream).catch((e: Error) => (/no such key/i.test(e.message) ? [] : Promise.reject(e))) as Promise<
      unknown[][]
    >,
    connection.xlen(keys.stream),
    connection.xlen(keys.dead),
  ]);
  const group = groups.map((g) => fieldMap<unknown>(g)).find((g) => g.name === EVENT_GROUP);
  if (!group) return { waiting: length, active: 0, failed, oldestWaitingAgeS: 0 };
  const active = Number(group.pending ?? 0);
  const lag = group.lag === null || group.lag === undefined ? Math.max(0, length - active) : Number(group.lag);
  let oldestWaitingAgeS = 0;
  if (lag > 0) {
    const [first] = (await connection.xrange(keys.stream, `(${String(group['last-delivered-id'])}`, '+', 'COUNT', 1)) as [
      string,
      string[],
    ][];
    if (first) oldestWaitingAgeS = Math.max(0, (Date.now() - entryTime(first[0])) / 1000);
  }
  return { waiting: lag, active, failed, oldestWaitingAgeS };
}

/** Redis's flat [name, value, name, value…] (a stream entry's fields, an XINFO answer) as an object. */
export function fieldMap<T = string>(flat: readonly unknown[]): Record<string, T> {
  const o: Record<string, T> = {};
  for (let i = 0; i + 1 < flat.length; i += 2) o[String(flat[i])] = flat[i + 1] as T;
  return o;
}

/** An event whose attempts ran out, as an operator sees it (never its payload: a status change carries a token). */
export interface DeadEvent {
  /** Its entry in the dead letters. */
  id: string;
  /** The event's own id (the outbox row's, `outbox-<n>`), when it had one. */
  eventId: string;
  deliveries: number;
  reason: string;
  failedAt: string;
}

/** The oldest `limit` dead letters of one partition. */
export async function listDead(connection: RedisConnection, keys: EventStreamKeys, limit: number): Promise<DeadEvent[]> {
  const rows = (await connection.xrange(keys.dead, '-', '+', 'COUNT', limit)) as [string, string[]][];
  return rows.map(([id, flat]) => {
    const f = fieldMap(flat);
    return {
      id,
      eventId: f[ENTRY_ID_FIELD] ?? '',
      deliveries: Number(f.deliveries ?? 0),
      reason: f.reason ?? '',
      failedAt: new Date(entryTime(id)).toISOString(),
    };
  });
}

/**
 * Puts up to `limit` dead letters of one partition back on its stream, oldest first, each moved in
 * one script (removed from the dead letters, added again; not at all if a concurrent replay took
 * it first): its consumer group runs it anew with a full set of attempts. The dedup window does
 * not apply: an operator asked for it.
 */
export async function replayDead(connection: RedisConnection, keys: EventStreamKeys, limit: number): Promise<number> {
  const scripts = withStreamScripts(connection);
  const rows = (await connection.xrange(keys.dead, '-', '+', 'COUNT', limit)) as [string, string[]][];
  let replayed = 0;
  for (const [id, flat] of rows) {
    const f = fieldMap(flat);
    if (f[ENTRY_ENVELOPE_FIELD] === undefined) continue;
    replayed += await scripts.gwReplayDead(keys.dead, keys.stream, id, f[ENTRY_ID_FIELD] ?? '', f[ENTRY_ENVELOPE_FIELD]);
  }
  return replayed;
}
