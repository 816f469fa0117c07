import { BaseConfig, EnvReader, readBaseConfig } from '@app/platform';

export class SettlementConfig {
  base: BaseConfig;
  healthPort: number;
  dbPoolSize: number;
}

export function loadSettlementConfig(env: NodeJS.ProcessEnv = process.env): SettlementConfig {
  const r = new EnvReader(env);
  const cfg: SettlementConfig = {
    base: readBaseConfig(r),
    healthPort: r.int('HEALTH_PORT', 3002, 0, 65535),
    dbPoolSize: r.int('DB_POOL_SIZE', 5, 1, 200),
  };
  r.done('settlement');
  return cfg;
}
