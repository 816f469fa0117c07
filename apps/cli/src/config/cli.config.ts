import type { FeeRate, MethodKind } from '@app/contracts';
import { readDefaultFeePlan } from '@app/boot';
import { BaseConfig, EnvReader, readBaseConfig } from '@app/platform';

export class CliConfig {
  base: BaseConfig;
  env: NodeJS.ProcessEnv;
  defaultFees: Record<MethodKind, FeeRate>;
  webhookSecretGraceHours: number;
  /** GATEWAY_OPERATOR_TOKEN: who runs the command (its role and audit trail entries). */
  operatorToken?: string;
}

export function loadCliConfig(env: NodeJS.ProcessEnv = process.env): CliConfig {
  const r = new EnvReader(env);
  const cfg: CliConfig = {
    base: readBaseConfig(r),
    env,
    defaultFees: readDefaultFeePlan(r),
    webhookSecretGraceHours: r.int('WEBHOOK_SECRET_GRACE_HOURS', 24, 0, 720),
    operatorToken: r.optional('GATEWAY_OPERATOR_TOKEN')?.trim(),
  };
  r.done('cli');
  return cfg;
}
