import { BaseConfig, EnvReader, readBaseConfig } from '@app/platform';

export class SettlementConfig {
  base: BaseConfig;
  healthPort: number;
  dbPoolSize: number;
  /**
   * The settlement sweep (SettlementSweeper): every SETTLEMENT_SWEEP_INTERVAL_MS, a capture or
   * cancel published SETTLEMENT_SWEEP_GRACE_S ago whose settlement is behind is settled from the
   * outbox, looking back SETTLEMENT_SWEEP_HORIZON_S when the worker starts.
   */
  sweepIntervalMs: number;
  sweepGraceS: number;
  sweepHorizonS: number;
}

export function loadSettlementConfig(env: NodeJS.ProcessEnv = process.env): SettlementConfig {
  const r = new EnvReader(env);
  const cfg: SettlementConfig = {
    base: readBaseConfig(r),
    healthPort: r.int('HEALTH_PORT', 3002, 0, 65535),
    dbPoolSize: r.int('DB_POOL_SIZE', 5, 1, 200),
    sweepIntervalMs: r.int('SETTLEMENT_SWEEP_INTERVAL_MS', 60_000, 100, 3_600_000),
    // Past the publish dedup window (EVENT_DEDUP_WINDOW_S, 15 min) and the events' own retries.
    sweepGraceS: r.int('SETTLEMENT_SWEEP_GRACE_S', 1_800, 1, 86_400),
    // Settlements are never pruned, so the horizon is only what a start reads (the outbox keeps 7 days).
    sweepHorizonS: r.int('SETTLEMENT_SWEEP_HORIZON_S', 86_400, 60, 7 * 86_400),
  };
  r.done('settlement');
  return cfg;
}
