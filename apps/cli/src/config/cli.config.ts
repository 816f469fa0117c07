import { BaseConfig, EnvReader, readBaseConfig } from '@app/platform';

export class CliConfig {
  base: BaseConfig;
  env: NodeJS.ProcessEnv;
}

export function loadCliConfig(env: NodeJS.ProcessEnv = process.env): CliConfig {
  const r = new EnvReader(env);
  const cfg: CliConfig = { base: readBaseConfig(r), env };
  r.done('cli');
  return cfg;
}
