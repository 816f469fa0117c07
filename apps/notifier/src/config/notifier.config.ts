import { BaseConfig, EnvReader, readBaseConfig } from '@app/platform';

export class NotifierConfig {
  base: BaseConfig;
  healthPort: number;
  dbPoolSize: number;
}

export function loadNotifierConfig(env: NodeJS.ProcessEnv = process.env): NotifierConfig {
  const r = new EnvReader(env);
  const cfg: NotifierConfig = {
    base: readBaseConfig(r),
    healthPort: r.int('HEALTH_PORT', 3003, 0, 65535),
    dbPoolSize: r.int('DB_POOL_SIZE', 5, 1, 200),
  };
  r.done('notifier');
  return cfg;
}
