import { AuthLimitConfig, EdgeLimitsConfig, readAuthLimits, readTrustedProxies } from '@app/http';
import { BaseConfig, EnvReader, readBaseConfig, readKeyVariable } from '@app/platform';

export class ConsoleConfig implements EdgeLimitsConfig {
  base: BaseConfig;
  host: string;
  /** PORT (3100): /console, /portal, /admin, /health and /metrics. */
  port: number;
  dbPoolSize: number;
  /** Failed sign-ins and operator tokens per address, and a portal link's opens and replays. */
  authLimits: AuthLimitConfig;
  /**
   * TRUSTED_PROXIES: the addresses (or CIDR ranges) of the proxies whose X-Forwarded-For names the
   * client (Fastify's trustProxy); empty: the client is the socket's address, X-Forwarded-For ignored.
   */
  trustedProxies: string[];
  /** Signs the operator console's session cookies (CONSOLE_SESSION_KEY, at least 32 characters). */
  consoleSessionKey: string;
  /** Signs merchant portal links and the portal's session cookies (PORTAL_LINK_KEY, at least 32 characters; see portal-link.ts). */
  portalLinkKey: string;
  /**
   * TRACE_URL_TEMPLATE: where a trace id links to in the operator's trace store, `{traceId}` in it
   * replaced by the id (e.g. `https://grafana.example/explore?left=…{traceId}…`); empty: the id is shown unlinked.
   */
  traceUrlTemplate: string;
}

export function loadConsoleConfig(env: NodeJS.ProcessEnv = process.env): ConsoleConfig {
  const r = new EnvReader(env);
  const base = readBaseConfig(r);
  const consoleSessionKey = readKeyVariable(r, base, 'CONSOLE_SESSION_KEY');
  if (consoleSessionKey && consoleSessionKey.length < 32)
    r.problem('CONSOLE_SESSION_KEY must be at least 32 characters (32 random bytes in base64)');
  const portalLinkKey = readKeyVariable(r, base, 'PORTAL_LINK_KEY');
  if (portalLinkKey && portalLinkKey.length < 32) r.problem('PORTAL_LINK_KEY must be at least 32 characters (32 random bytes in base64)');
  const traceUrlTemplate = r.str('TRACE_URL_TEMPLATE', '');
  if (traceUrlTemplate && (!/^https?:\/\//.test(traceUrlTemplate) || !traceUrlTemplate.includes('{traceId}')))
    r.problem('TRACE_URL_TEMPLATE must be an http(s) URL containing {traceId}');
  const cfg: ConsoleConfig = {
    base,
    host: r.str('HOST', '127.0.0.1'),
    port: r.int('PORT', 3100, 0, 65535),
    dbPoolSize: r.int('DB_POOL_SIZE', 4, 1, 50),
    authLimits: readAuthLimits(r),
    trustedProxies: readTrustedProxies(r),
    consoleSessionKey,
    portalLinkKey,
    traceUrlTemplate,
  };
  r.done('console');
  return cfg;
}
