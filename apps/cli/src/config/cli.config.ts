import type { FeeRate, MethodKind } from '@app/contracts';
import { readDefaultFeePlan } from '@app/boot/fee-defaults';
import { BaseConfig, EnvReader, readBaseConfig, readDevKeys } from '@app/platform';

export class CliConfig {
  base: BaseConfig;
  env: NodeJS.ProcessEnv;
  defaultFees: Record<MethodKind, FeeRate>;
  webhookSecretGraceHours: number;
  /** GATEWAY_OPERATOR_TOKEN: who runs the command (its role and audit trail entries). */
  operatorToken?: string;
  /**
   * PORTAL_LINK_KEY (the api's, see portal-link.ts): signs merchant portal links. Only
   * merchant:portal-link needs it, so a CLI without it runs every other command.
   */
  portalLinkKey?: string;
  /**
   * CONSOLE_PUBLIC_URL (PUBLIC_BASE_URL, its former name, when it is not set): where merchants reach
   * the console app (the start of a portal link); http://127.0.0.1:$CONSOLE_PORT (3100) outside production.
   */
  publicBaseUrl?: string;
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
  cfg.portalLinkKey =
    r.optional('PORTAL_LINK_KEY') ?? (cfg.base.nodeEnv === 'development' ? readDevKeys(cfg.base.dataDir).PORTAL_LINK_KEY : undefined);
  if (cfg.portalLinkKey !== undefined && cfg.portalLinkKey.length < 32) r.problem('PORTAL_LINK_KEY must be at least 32 characters');
  const variable =
    r.optional('CONSOLE_PUBLIC_URL') !== undefined || r.optional('PUBLIC_BASE_URL') === undefined
      ? 'CONSOLE_PUBLIC_URL'
      : 'PUBLIC_BASE_URL';
  const publicBase =
    r.optional(variable) ?? (cfg.base.nodeEnv === 'production' ? undefined : `http://127.0.0.1:${r.int('CONSOLE_PORT', 3100, 1, 65535)}`);
  if (publicBase !== undefined) {
    const url = r.parse(variable, () => new URL(publicBase));
    if (url && !/^https?:$/.test(url.protocol)) r.problem(`${variable} must be an http(s) URL such as https://console.pay.example.com`);
    cfg.publicBaseUrl = publicBase.replace(/\/+$/, '');
  }
  r.done('cli');
  return cfg;
}
