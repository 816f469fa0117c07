import type { RedisConnection } from '@app/platform/redis';

/** A stream entry's fields: the event's id (the outbox row's, when it has one) and its envelope. */
export const ENTRY_ID_FIELD = 'i';
export const ENTRY_ENVELOPE_FIELD = 'e';

/**
 * Adds the event unless an event with the same id was added within the dedup window (a relay
 * that publishes a batch again adds nothing twice). The marker is set after the entry, so an
 * `XADD` that fails leaves no marker to hide the retry. One round trip; the keys share a slot.
 */
const PUBLISH = `
local dedup = ARGV[1] ~= '0'
if dedup and redis.call('EXISTS', KEYS[2]) == 1 then return 0 end
redis.call('XADD', KEYS[1], '*', '${ENTRY_ID_FIELD}', ARGV[2], '${ENTRY_ENVELOPE_FIELD}', ARGV[3])
if dedup then redis.call('SET', KEYS[2], '1', 'EX', ARGV[1]) end
return 1`;

/**
 * Claims again (idle time reset) those of the given entries that are still this consumer's, and
 * only those: an entry another consumer took over while this one stalled (a long GC pause, a
 * frozen VM) stays with it. With ARGV[3] = '1' the claim is JUSTID (a renewal: the delivery
 * count stays) and returns the ids; else it counts a delivery and returns the entries.
 */
const CLAIM_OWNED = `
local owned = {}
for _, e in ipairs(redis.call('XPENDING', KEYS[1], ARGV[1], '-', '+', 1000, ARGV[2])) do owned[e[1]] = true end
local args = {'XCLAIM', KEYS[1], ARGV[1], ARGV[2], '0'}
for i = 4, #ARGV do if owned[ARGV[i]] then args[#args + 1] = ARGV[i] end end
if #args == 5 then return {} end
if ARGV[3] == '1' then args[#args + 1] = 'JUSTID' end
return redis.call(unpack(args))`;

/** Moves one dead letter back onto its stream, unless a concurrent replay already did. */
const REPLAY_ONE = `
if redis.call('XDEL', KEYS[1], ARGV[1]) == 0 then return 0 end
redis.call('XADD', KEYS[2], '*', '${ENTRY_ID_FIELD}', ARGV[2], '${ENTRY_ENVELOPE_FIELD}', ARGV[3])
return 1`;

export type StreamScripts = RedisConnection & {
  gwPublishEvent(stream: string, seen: string, dedupS: string, id: string, envelope: string): Promise<number>;
  gwClaimOwned(stream: string, group: string, consumer: string, justId: '0' | '1', ...ids: string[]): Promise<unknown[]>;
  gwReplayDead(dead: string, stream: string, deadId: string, eventId: string, envelope: string): Promise<number>;
};

/** The connection with the event streams' scripts defined on it (once). */
export function withStreamScripts(connection: RedisConnection): StreamScripts {
  const c = connection as StreamScripts;
  if (typeof c.gwPublishEvent !== 'function') {
    connection.defineCommand('gwPublishEvent', { numberOfKeys: 2, lua: PUBLISH });
    connection.defineCommand('gwClaimOwned', { numberOfKeys: 1, lua: CLAIM_OWNED });
    connection.defineCommand('gwReplayDead', { numberOfKeys: 2, lua: REPLAY_ONE });
  }
  return c;
}
