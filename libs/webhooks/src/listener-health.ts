/**
 * Listener health (issue 16, item 2). A listener is a merchant's origin: the scheme, host and
 * port its deliveries go to. It is failing from the first failed attempt after its last success;
 * one success ends that. Failing with no success for LISTENER_DISABLE_AFTER, it is disabled: its
 * deliveries are then held, not attempted, until an operator enables it again. Pure: the
 * notifier folds attempt results with this and the repository applies the fold in one statement.
 */

export type ListenerState = 'enabled' | 'disabled';

/** `scheme://host:port` of a delivery URL, the port always written (the default one too). */
export function listenerOrigin(url: string): string {
  const u = new URL(url);
  if (u.protocol !== 'http:' && u.protocol !== 'https:') throw new Error(`not an http(s) URL: ${u.protocol}`);
  const port = u.port || (u.protocol === 'https:' ? '443' : '80');
  return `${u.protocol}//${u.hostname}:${port}`;
}

/**
 * The listener an operator names for a recovery: an origin or a delivery URL (cut to its origin),
 * or a bare host (`host` or `host:port`) matched against the merchant's `known` listener origins.
 * Answers the origin, or a problem to show when it names none or several.
 */
export function originNamed(given: string, known: readonly string[]): { origin: string } | { problem: string } {
  const v = given.trim().toLowerCase();
  if (v.includes('://')) {
    try {
      return { origin: listenerOrigin(v) };
    } catch {
      return { problem: `${JSON.stringify(given)} is not an http(s) origin such as https://hooks.example.com:443` };
    }
  }
  const matches = known.filter((o) => {
    const hostPort = o.slice(o.indexOf('://') + 3);
    return hostPort === v || hostPort.slice(0, hostPort.lastIndexOf(':')) === v;
  });
  if (matches.length === 1) return { origin: matches[0] };
  if (matches.length === 0) return { problem: `the merchant has no listener at ${JSON.stringify(given)}` };
  return {
    problem: `the merchant has several listeners at ${JSON.stringify(given)} (${matches.join(', ')}): give one as scheme://host:port`,
  };
}

/** One attempt's verdict on its listener: `ok` when the listener answered 2xx; `at` when it ended. */
export interface AttemptVerdict {
  ok: boolean;
  at: Date;
}

/**
 * What a batch of attempts to one listener changes, whatever its row held before: applied as
 * "after a success, start over from `failuresAfterSuccess`/`firstFailureAfterSuccess`; without
 * one, add to the running count and keep the earlier failing_since".
 */
export interface HealthDelta {
  /** The latest success in the batch, if any. */
  lastSuccessAt?: Date;
  /** The first failure after that success (or, with no success, the first failure of the batch). */
  firstFailureAfterSuccess?: Date;
  /** Failures after that success (or, with no success, every failure of the batch). */
  failuresAfterSuccess: number;
}

/** Folds verdicts (in any order: they are sorted by when they ended) into one delta. */
export function foldVerdicts(verdicts: readonly AttemptVerdict[]): HealthDelta {
  const sorted = [...verdicts].sort((a, b) => a.at.getTime() - b.at.getTime());
  const delta: HealthDelta = { failuresAfterSuccess: 0 };
  for (const v of sorted) {
    if (v.ok) {
      delta.lastSuccessAt = v.at;
      delta.firstFailureAfterSuccess = undefined;
      delta.failuresAfterSuccess = 0;
    } else {
      delta.firstFailureAfterSuccess ??= v.at;
      delta.failuresAfterSuccess++;
    }
  }
  return delta;
}

export interface ListenerHealth {
  state: ListenerState;
  /** The first failure after the last success; null while the listener is not failing. */
  failingSince: Date | null;
  lastSuccessAt: Date | null;
  consecutiveFailures: number;
}

/** A listener's health after a delta (what the repository's upsert computes in SQL). */
export function applyDelta(h: ListenerHealth, d: HealthDelta): ListenerHealth {
  if (d.lastSuccessAt) {
    return {
      state: h.state,
      failingSince: d.firstFailureAfterSuccess ?? null,
      lastSuccessAt: h.lastSuccessAt && h.lastSuccessAt > d.lastSuccessAt ? h.lastSuccessAt : d.lastSuccessAt,
      consecutiveFailures: d.failuresAfterSuccess,
    };
  }
  return {
    state: h.state,
    failingSince: h.failingSince ?? d.firstFailureAfterSuccess ?? null,
    lastSuccessAt: h.lastSuccessAt,
    consecutiveFailures: h.consecutiveFailures + d.failuresAfterSuccess,
  };
}

/** Whether an enabled listener has been failing, with no success, for `disableAfterMs` by `now`. */
export function dueForDisable(h: ListenerHealth, now: Date, disableAfterMs: number): boolean {
  return h.state === 'enabled' && h.failingSince !== null && now.getTime() - h.failingSince.getTime() >= disableAfterMs;
}

/** The health a listener starts with, and has again once an operator enables it. */
export const FRESH_LISTENER: ListenerHealth = { state: 'enabled', failingSince: null, lastSuccessAt: null, consecutiveFailures: 0 };
