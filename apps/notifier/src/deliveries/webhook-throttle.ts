import type { RedisConnection } from '@app/platform';
import { throttleBucket } from '@app/webhooks';

/**
 * Takes a token from a listener's bucket, or says when to come back. One hash per listener
 * (merchant × origin): `t`, the bucket's theoretical arrival time (GCRA: the next token is free
 * at t − (burst − 1) × interval), and `b`, when the last delivery put back is due. Times are Redis's
 * clock in microseconds, so every notifier replica counts against the same bucket and clock.
 *
 * A delivery is taken when a token is free and none put back waits ahead of it: the last one put
 * back is given one interval past its due time to come back for its token, which no newcomer takes
 * meanwhile (a delivery that was put back itself, `returning`, may take a free token: its turn has
 * come). Otherwise it is put
 * back one interval after the last one put back (and no earlier than the next free token), so a
 * backlog comes back in the order it was put back, one per token, instead of all at once.
 *
 * KEYS[1] the listener's hash; ARGV: interval (µs), burst (tokens), returning ('1' or '0').
 * Answers 0 (taken) or the microseconds until the delivery is due.
 */
const TAKE = `
local now_t = redis.call('TIME')
local now = tonumber(now_t[1]) * 1000000 + tonumber(now_t[2])
local interval = tonumber(ARGV[1])
local tau = (tonumber(ARGV[2]) - 1) * interval
local tat = math.max(tonumber(redis.call('HGET', KEYS[1], 't') or '0'), now)
local backlog = tonumber(redis.call('HGET', KEYS[1], 'b') or '0')
if tat - now <= tau and (ARGV[3] == '1' or backlog + interval <= now) then
  tat = tat + interval
  redis.call('HSET', KEYS[1], 't', string.format('%.0f', tat))
  redis.call('PEXPIRE', KEYS[1], math.ceil((math.max(tat, backlog) - now) / 1000) + 1000)
  return 0
end
local due = math.max(backlog + interval, tat - tau)
redis.call('HSET', KEYS[1], 'b', string.format('%.0f', due))
redis.call('PEXPIRE', KEYS[1], math.ceil((math.max(tat, due) - now) / 1000) + 1000)
return due - now
`;

type WithTake = RedisConnection & {
  throttleTake(key: string, intervalUs: number, burst: number, returning: '1' | '0'): Promise<number>;
};

/** A delivery put back comes a little after its turn, never before it (clocks and timers are not exact). */
const RETURN_SLACK_MS = 5;

/**
 * The listeners' buckets in Redis, shared by every notifier replica (see TAKE). `take` answers 0
 * when the delivery may go now, else the milliseconds until it should come back.
 */
export class ListenerBuckets {
  private readonly redis: WithTake;

  constructor(
    redis: RedisConnection,
    private readonly keyPrefix: string,
  ) {
    if (!('throttleTake' in redis)) redis.defineCommand('throttleTake', { numberOfKeys: 1, lua: TAKE });
    this.redis = redis as WithTake;
  }

  async take(merchantId: string, origin: string, perS: number, returning: boolean): Promise<number> {
    const { intervalUs, burst } = throttleBucket(perS);
    const waitUs = await this.redis.throttleTake(
      `${this.keyPrefix}:throttle:${merchantId}:${origin}`,
      intervalUs,
      burst,
      returning ? '1' : '0',
    );
    return waitUs <= 0 ? 0 : Math.ceil(waitUs / 1000) + RETURN_SLACK_MS;
  }
}

/** How long a merchant's throttle setting is used before it is read again (a change applies within this). */
export const THROTTLE_SETTING_TTL_MS = 5_000;

/**
 * The merchants' throttle settings, each read from Postgres at most once per THROTTLE_SETTING_TTL_MS
 * (concurrent deliveries of a merchant share the read in flight), so a delivery costs no extra
 * read, and one to a merchant without a throttle no Redis call either.
 */
export class ThrottleSettings {
  private readonly cache = new Map<string, { value: Promise<number | null>; expiresAt: number }>();

  constructor(
    private readonly read: (merchantId: string) => Promise<number | null | undefined>,
    private readonly ttlMs = THROTTLE_SETTING_TTL_MS,
  ) {}

  perSOf(merchantId: string): Promise<number | null> {
    const now = Date.now();
    const hit = this.cache.get(merchantId);
    if (hit && hit.expiresAt > now) return hit.value;
    if (this.cache.size > 10_000) for (const [k, v] of this.cache) if (v.expiresAt <= now) this.cache.delete(k);
    const value = this.read(merchantId).then((v) => v ?? null);
    this.cache.set(merchantId, { value, expiresAt: now + this.ttlMs });
    // A failed read is not kept: the next delivery reads again.
    value.catch(() => {
      if (this.cache.get(merchantId)?.value === value) this.cache.delete(merchantId);
    });
    return value;
  }
}
