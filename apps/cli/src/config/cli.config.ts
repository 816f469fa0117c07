import type { FeeRate, MethodKind } from '@app/contracts';
import { BaseConfig, EnvReader, readBaseConfig, readDefaultFeePlan } from '@app/platform';

export class CliConfig {
  base: BaseConfig;
  env: NodeJS.ProcessEnv;
  defaultFees: Record<MethodKind, FeeRate>;
  webhookSecretGraceHours: number;
}

export function loadCliConfig(env: NodeJS.ProcessEnv = process.env): CliConfig {
  const r = new EnvReader(env);
  const cfg: CliConfig = { base: readBaseConfig(r), env, defaultFees: readDefaultFeePlan(r), webhookSecretGraceHours: r.int('WEBHOOK_SECRET_GRACE_HOURS', 24, 0, 720) };
  r.done('cli');
  return cfg;
}
