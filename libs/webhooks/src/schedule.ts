/**
 * DESIGN.md 4 (Standard Webhooks): attempt 1 at once, then retries after 5 s, 5 min, 30 min, 2 h,
 * 5 h, 10 h, 14 h, 20 h and 24 h, each ±20 % jitter. `scale` compresses the whole schedule (tests,
 * benchmarks); production runs at 1.
 */
export const RETRY_SCHEDULE_MS = [
  0, 5_000, 300_000, 1_800_000, 7_200_000, 18_000_000, 36_000_000, 50_400_000, 72_000_000, 86_400_000,
] as const;
export const MAX_ATTEMPTS = RETRY_SCHEDULE_MS.length;

/**
 * The wait before attempt `attemptsMade + 1`. A listener's Retry-After is honoured when it asks for
 * longer than the schedule, up to the schedule's longest step (so a listener cannot park a
 * delivery for a week, nor make us hammer it sooner than the schedule).
 */
export function retryDelayMs(attemptsMade: number, scale: number, retryAfterMs?: number, random: () => number = Math.random): number {
  const step = RETRY_SCHEDULE_MS[Math.min(Math.max(attemptsMade, 1), MAX_ATTEMPTS - 1)] * scale;
  const jittered = Math.round(step * (0.8 + 0.4 * random()));
  if (retryAfterMs === undefined) return jittered;
  return Math.max(jittered, Math.min(retryAfterMs, RETRY_SCHEDULE_MS[MAX_ATTEMPTS - 1] * scale));
}

/** Retry-After as seconds or an HTTP date (RFC 9110 10.2.3); undefined when absent or unreadable. */
export function parseRetryAfter(value: string | undefined, now = Date.now()): number | undefined {
  if (!value) return undefined;
  if (/^\d+$/.test(value.trim())) return Number(value.trim()) * 1000;
  const at = Date.parse(value);
  return Number.isNaN(at) ? undefined : Math.max(0, at - now);
}
