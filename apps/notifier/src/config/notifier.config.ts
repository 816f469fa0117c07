import type { BlockList } from 'node:net';
import { readKeyring } from '@app/boot';
import { BaseConfig, EnvReader, parseDurationMs, readBaseConfig } from '@app/platform';
import type { Keyring } from '@app/vault/keyring';
import { loopbackEntries, parseAllowList } from '@app/webhooks';

export class NotifierConfig {
  base: BaseConfig;
  healthPort: number;
  dbPoolSize: number;
  /** Per-attempt limit for the listener's answer. */
  timeoutMs: number;
  /** Limits within it: the connection (DNS and TCP), and the answer's status line and headers, from the attempt's start. */
  connectTimeoutMs: number;
  firstByteTimeoutMs: number;
  /** Multiplies every step of the retry schedule (1 in production; tests compress it). */
  scheduleScale: number;
  /** Networks a webhook may reach although private/loopback/link-local (development, tests). */
  allowNetworks: BlockList;
  /** Attempts in flight in this process, and at most this many to one destination (registrable domain or host, any port). */
  concurrency: number;
  perDestination: number;
  /** Attempts of one merchant in flight at once, over every notifier replica (WEBHOOK_PER_MERCHANT). */
  perMerchant: number;
  /** How long an attempt over the host's cap waits for a slot before the queue takes it. */
  slotWaitMs: number;
  /** How often, and how late, a delivery without a job is looked for (DeliverySweeper). */
  sweepIntervalMs: number;
  sweepGraceS: number;
  /**
   * The event sweep (EventSweeper), on the same interval: a status change published this long ago
   * with no delivery is delivered from the outbox (WEBHOOK_EVENT_SWEEP_GRACE_S), looking back at
   * most this far when the notifier starts (WEBHOOK_EVENT_SWEEP_HORIZON_S).
   */
  eventSweepGraceS: number;
  eventSweepHorizonS: number;
  /** Opens the merchants' sealed webhook secrets (SECRETS_KEKS); never the vault's keys. */
  secrets: Keyring;
  /** A listener failing with no success for this long is disabled (LISTENER_DISABLE_AFTER). */
  listenerDisableAfterMs: number;
  /** Deliveries a recovery replays per step, and the pause between two steps (RECOVERY_PAGE_SIZE, RECOVERY_PAUSE_MS). */
  recoveryPageSize: number;
  recoveryPauseMs: number;
}

export function loadNotifierConfig(env: NodeJS.ProcessEnv = process.env): NotifierConfig {
  const r = new EnvReader(env);
  const scale = r.str('WEBHOOK_SCHEDULE_SCALE', '1');
  if (!/^\d+(\.\d+)?$/.test(scale) || Number(scale) <= 0 || Number(scale) > 1)
    r.problem(`WEBHOOK_SCHEDULE_SCALE must be a number in (0, 1] (got "${scale}")`);
  const base = readBaseConfig(r);
  const timeoutMs = r.int('WEBHOOK_TIMEOUT_MS', 15_000, 100, 120_000);
  // Unset, each defaults to its usual value but never beyond the limit that contains it.
  const firstByteTimeoutMs = r.int('WEBHOOK_FIRST_BYTE_TIMEOUT_MS', Math.min(10_000, timeoutMs), 100, 120_000);
  const connectTimeoutMs = r.int('WEBHOOK_CONNECT_TIMEOUT_MS', Math.min(5_000, firstByteTimeoutMs), 100, 120_000);
  if (firstByteTimeoutMs > timeoutMs)
    r.problem(`WEBHOOK_FIRST_BYTE_TIMEOUT_MS (${firstByteTimeoutMs}) must not exceed WEBHOOK_TIMEOUT_MS (${timeoutMs})`);
  if (connectTimeoutMs > firstByteTimeoutMs)
    r.problem(`WEBHOOK_CONNECT_TIMEOUT_MS (${connectTimeoutMs}) must not exceed WEBHOOK_FIRST_BYTE_TIMEOUT_MS (${firstByteTimeoutMs})`);
  const cfg: NotifierConfig = {
    base,
    healthPort: r.int('HEALTH_PORT', 3003, 0, 65535),
    dbPoolSize: r.int('DB_POOL_SIZE', 20, 1, 200),
    timeoutMs,
    connectTimeoutMs,
    firstByteTimeoutMs,
    scheduleScale: Number(scale) || 1,
    allowNetworks: r.parse('WEBHOOK_ALLOW_NETWORKS', () => parseAllowList(r.optional('WEBHOOK_ALLOW_NETWORKS') ?? ''))!,
    concurrency: r.int('WEBHOOK_CONCURRENCY', 64, 1, 1000),
    perDestination: r.int('WEBHOOK_PER_DESTINATION', 16, 1, 1000),
    perMerchant: r.int('WEBHOOK_PER_MERCHANT', 16, 1, 1000),
    slotWaitMs: r.int('WEBHOOK_SLOT_WAIT_MS', 250, 0, 10_000),
    sweepIntervalMs: r.int('WEBHOOK_SWEEP_INTERVAL_MS', 60_000, 100, 3_600_000),
    sweepGraceS: r.int('WEBHOOK_SWEEP_GRACE_S', 300, 1, 86_400),
    // Past the publish dedup window (EVENT_DEDUP_WINDOW_S, 15 min) and the events' own retries.
    eventSweepGraceS: r.int('WEBHOOK_EVENT_SWEEP_GRACE_S', 1_800, 1, 86_400),
    // Within the finished deliveries' retention (at least a day), so a change whose delivery was
    // pruned is never delivered again.
    eventSweepHorizonS: r.int('WEBHOOK_EVENT_SWEEP_HORIZON_S', 21_600, 60, 86_400),
    secrets: readKeyring(r, base, 'SECRETS_KEKS'),
    listenerDisableAfterMs:
      r.parse('LISTENER_DISABLE_AFTER', () =>
        parseDurationMs('LISTENER_DISABLE_AFTER', r.str('LISTENER_DISABLE_AFTER', '5d'), 1_000, 365 * 86_400_000),
      ) ?? 5 * 86_400_000,
    recoveryPageSize: r.int('RECOVERY_PAGE_SIZE', 200, 1, 1000),
    recoveryPauseMs: r.int('RECOVERY_PAUSE_MS', 0, 0, 60_000),
  };
  // Loopback is for tests and local development: a production notifier never delivers to itself.
  let loopback: string[] = [];
  try {
    loopback = loopbackEntries(r.optional('WEBHOOK_ALLOW_NETWORKS') ?? '');
  } catch {
    // A malformed entry is already reported by the parse above.
  }
  if (cfg.base.nodeEnv === 'production' && loopback.length > 0)
    r.problem(`WEBHOOK_ALLOW_NETWORKS may not open loopback in production (${loopback.join(', ')})`);
  r.done('notifier');
  return cfg;
}
