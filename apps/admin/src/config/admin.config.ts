import { BaseConfig, EnvReader, readBaseConfig } from '@app/platform';

export class AdminConfig {
  base: BaseConfig;
  port: number;
  host: string;
  dbPoolSize: number;
  /** ADMIN_MAX_COMMANDS: commands running at once; one more is a 429 (each is a process of its own). */
  maxCommands: number;
  /** ADMIN_COMMAND_TIMEOUT_MS: a command still running then is stopped (SIGTERM) and said to have timed out. */
  commandTimeoutMs: number;
  /** ADMIN_OUTPUT_LIMIT_BYTES: what a command may print (stdout and stderr each) before it is stopped. */
  outputLimitBytes: number;
}

export function loadAdminConfig(env: NodeJS.ProcessEnv = process.env): AdminConfig {
  const r = new EnvReader(env);
  const cfg: AdminConfig = {
    base: readBaseConfig(r),
    port: r.int('PORT', 3010, 0, 65535),
    host: r.str('HOST', '127.0.0.1'),
    dbPoolSize: r.int('DB_POOL_SIZE', 2, 1, 50),
    maxCommands: r.int('ADMIN_MAX_COMMANDS', 4, 1, 64),
    commandTimeoutMs: r.int('ADMIN_COMMAND_TIMEOUT_MS', 30 * 60_000, 1_000, 24 * 3_600_000),
    outputLimitBytes: r.int('ADMIN_OUTPUT_LIMIT_BYTES', 64 * 1024 * 1024, 1024, 1024 * 1024 * 1024),
  };
  r.done('admin');
  return cfg;
}
