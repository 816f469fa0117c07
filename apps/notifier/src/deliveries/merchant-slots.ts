import { randomUUID } from 'node:crypto';
import type { RedisConnection } from '@app/platform';
import type { Release } from './host-slots';

/**
 * Takes one of a merchant's slots if fewer than `cap` are held. One sorted set per merchant: a
 * member per slot held (a lease id), scored with when the lease runs out (Redis's clock, ms), so a
 * slot held by a replica that died comes back by itself. Every notifier replica counts against the
 * same set.
 *
 * KEYS[1] the merchant's set; ARGV: cap, lease id, lease length (ms). Answers 1 (taken) or 0.
 */
const ACQUIRE = `
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', now)
if redis.call('ZCARD', KEYS[1]) >= tonumber(ARGV[1]) then return 0 end
redis.call('ZADD', KEYS[1], now + tonumber(ARGV[3]), ARGV[2])
redis.call('PEXPIRE', KEYS[1], tonumber(ARGV[3]) + 1000)
return 1
`;

type WithAcquire = RedisConnection & {
  merchantSlotAcquire(key: string, cap: number, lease: string, leaseMs: number): Promise<number>;
};

interface Pace {
  /** How long one of the merchant's slots is held, smoothed (ms). */
  holdMs: number;
  /** When the last attempt deferred for this merchant is due (ms since epoch). */
  deferredUntil: number;
  /** The slots this process holds now (lease → since when), oldest first. */
  held: Map<string, number>;
}

const INITIAL_HOLD_MS = 100;
const MIN_DEFER_MS = 100;
/** Merchants remembered (for their hold times) before those with nothing deferred are forgotten. */
const MAX_MERCHANTS = 10_000;

/**
 * At most `cap` attempts of one merchant in flight at once, over every notifier replica (the
 * slots are leases in Redis, under the queue's prefix, like the listeners' throttle buckets). An
 * attempt that finds its merchant's slots all held does not wait: it goes back to the queue, due
 * at the pace the merchant's slots free up (deferMs), without spending an attempt. So one merchant
 * whose listeners hang holds at most `cap` of the notifiers' slots, and the others' webhooks keep
 * going. A lease lasts `leaseMs` (longer than an attempt can take): given back when the attempt is
 * done, or by itself if the replica holding it dies.
 */
export class MerchantSlots {
  private readonly redis: WithAcquire;
  private readonly paces = new Map<string, Pace>();

  constructor(
    redis: RedisConnection,
    private readonly keyPrefix: string,
    private readonly cap: number,
    private readonly leaseMs: number,
    private readonly now: () => number = Date.now,
  ) {
    if (!('merchantSlotAcquire' in redis)) redis.defineCommand('merchantSlotAcquire', { numberOfKeys: 1, lua: ACQUIRE });
    this.redis = redis as WithAcquire;
  }

  /** A slot of `merchantId` (to release when done), or undefined when all its slots are held. */
  async acquire(merchantId: string): Promise<Release | undefined> {
    const key = this.keyOf(merchantId);
    const lease = randomUUID();
    if ((await this.redis.merchantSlotAcquire(key, this.cap, lease, this.leaseMs)) !== 1) return undefined;
    const since = this.now();
    const pace = this.paceOf(merchantId);
    pace.held.set(lease, since);
    let released = false;
    return () => {
      if (released) return;
      released = true;
      pace.held.delete(lease);
      pace.holdMs = 0.8 * pace.holdMs + 0.2 * (this.now() - since);
      // Not waited for: a lease that is not removed (Redis unreachable) runs out by itself.
      this.redis.zrem(key, lease).catch(() => undefined);
    };
  }

  /**
   * How long an attempt that found its merchant's slots all held should wait in the queue: each
   * deferral one slot's worth of the merchant's time (hold / cap) after the previous one, ±20 %,
   * so the backlog comes back about as fast as the merchant's slots free up. A slot held longer
   * than the hold time measured so far (listeners that hang: none has come back yet) counts as
   * held that long already, so a hanging merchant's backlog does not cycle through the queue.
   */
  deferMs(merchantId: string): number {
    const pace = this.paceOf(merchantId);
    const now = this.now();
    const oldest = pace.held.values().next();
    const holdMs = oldest.done ? pace.holdMs : Math.max(pace.holdMs, now - oldest.value);
    pace.deferredUntil = Math.max(pace.deferredUntil, now) + holdMs / this.cap;
    return Math.max(MIN_DEFER_MS, Math.round((pace.deferredUntil - now) * (0.8 + Math.random() * 0.4)));
  }

  /** Slots of `merchantId` held now, over every replica (leases not run out). */
  async heldBy(merchantId: string): Promise<number> {
    return this.redis.zcount(this.keyOf(merchantId), `(${Date.now()}`, '+inf');
  }

  private keyOf(merchantId: string): string {
    return `${this.keyPrefix}:merchant-slots:${merchantId}`;
  }

  private paceOf(merchantId: string): Pace {
    let pace = this.paces.get(merchantId);
    if (!pace) {
      if (this.paces.size >= MAX_MERCHANTS) {
        const now = this.now();
        for (const [id, p] of this.paces) if (p.held.size === 0 && p.deferredUntil < now) this.paces.delete(id);
      }
      this.paces.set(merchantId, (pace = { holdMs: INITIAL_HOLD_MS, deferredUntil: 0, held: new Map() }));
    }
    return pace;
  }
}
