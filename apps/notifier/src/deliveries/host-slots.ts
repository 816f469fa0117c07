/** Gives a held slot back (once; later calls do nothing). */
export type Release = () => void;

interface Waiter {
  grant: (release: Release | undefined) => void;
  timer: NodeJS.Timeout;
}

interface HostState {
  active: number;
  waiters: Waiter[];
  /** How long a slot of this host is held, smoothed (ms). */
  holdMs: number;
  /** When the last attempt deferred for this host is due (ms since epoch). */
  deferredUntil: number;
}

/** Before a host's first slot is given back, a slot is assumed to be held this long (ms). */
const INITIAL_HOLD_MS = 100;
const MIN_DEFER_MS = 100;
/** Waiters per host at most, per slot of the cap, however fast the host. */
const MAX_WAITERS_PER_SLOT = 4;
/** Hosts remembered (for their hold times) before idle ones are forgotten. */
const MAX_IDLE_HOSTS = 10_000;

/**
 * At most `cap` attempts at a time to one host. A caller over the cap waits for a slot, up to
 * `maxWaitMs`, unless the callers already waiting would take longer than that at the host's pace
 * (slots held `holdMs` each, smoothed) or 4 × cap of them already wait: then, or when the wait
 * runs out, it gets undefined and hands the attempt to the queue, for a time `deferMs` spreads
 * out at the pace the host drains. So a fast listener keeps its attempts in process; a slow one
 * holds its cap plus at most maxWaitMs of waiters (cap × maxWaitMs / holdMs, never over 4 × cap)
 * and never starves the others; and its backlog waits in the queue's delayed set instead of
 * cycling through Redis.
 */
export class HostSlots {
  private readonly hosts = new Map<string, HostState>();

  constructor(
    private readonly cap: number,
    private readonly maxWaitMs: number,
    private readonly now: () => number = Date.now,
  ) {}

  /** A slot for `host` (to release when done), or undefined when the host stays busy. */
  acquire(host: string): Promise<Release | undefined> {
    const state = this.stateOf(host);
    if (state.active < this.cap) {
      state.active++;
      return Promise.resolve(this.releaseOf(state));
    }
    // The wait it would take at the host's pace; past maxWaitMs the queue is the better place.
    const expectedWaitMs = ((state.waiters.length + 1) * state.holdMs) / this.cap;
    if (expectedWaitMs > this.maxWaitMs || state.waiters.length >= MAX_WAITERS_PER_SLOT * this.cap) return Promise.resolve(undefined);
    return new Promise((grant) => {
      const waiter: Waiter = {
        grant,
        timer: setTimeout(() => {
          const i = state.waiters.indexOf(waiter);
          if (i >= 0) state.waiters.splice(i, 1);
          grant(undefined);
        }, this.maxWaitMs),
      };
      state.waiters.push(waiter);
    });
  }

  /**
   * How long an attempt that found `host` busy should wait in the queue: each deferral is due
   * one slot's worth of the host's time (hold / cap) after the previous one, ±20 %, so a backlog
   * comes back at about the rate the host takes it rather than all at once.
   */
  deferMs(host: string): number {
    const state = this.stateOf(host);
    const now = this.now();
    state.deferredUntil = Math.max(state.deferredUntil, now) + state.holdMs / this.cap;
    return Math.max(MIN_DEFER_MS, Math.round((state.deferredUntil - now) * (0.8 + Math.random() * 0.4)));
  }

  /** Attempts holding a slot of `host` now. */
  activeFor(host: string): number {
    return this.hosts.get(host)?.active ?? 0;
  }

  private stateOf(host: string): HostState {
    let state = this.hosts.get(host);
    if (!state) {
      if (this.hosts.size >= MAX_IDLE_HOSTS) this.forgetIdle();
      this.hosts.set(host, (state = { active: 0, waiters: [], holdMs: INITIAL_HOLD_MS, deferredUntil: 0 }));
    }
    return state;
  }

  /** Forgets hosts with nothing in flight or deferred (their hold times start over if they return). */
  private forgetIdle(): void {
    const now = this.now();
    for (const [host, s] of this.hosts) if (s.active === 0 && s.waiters.length === 0 && s.deferredUntil < now) this.hosts.delete(host);
  }

  private releaseOf(state: HostState): Release {
    const since = this.now();
    let released = false;
    return () => {
      if (released) return;
      released = true;
      state.holdMs = 0.8 * state.holdMs + 0.2 * (this.now() - since);
      // The slot passes straight to the longest waiter; the count only drops when none waits.
      const next = state.waiters.shift();
      if (next) {
        clearTimeout(next.timer);
        next.grant(this.releaseOf(state));
      } else {
        state.active--;
      }
    };
  }
}
