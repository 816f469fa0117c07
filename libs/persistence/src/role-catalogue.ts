/**
 * The Postgres role each app (and the operator CLI) connects as. Roles are cluster-wide; their
 * grants are per database (each database's migration applies them there).
 */
export const APP_ROLES = {
  api: 'gateway_api',
  // The operators' console, the merchants' portal and /admin: their own process, apart from the api.
  console: 'gateway_console',
  tokenizer: 'gateway_tokenizer',
  settlement: 'gateway_settlement',
  notifier: 'gateway_notifier',
  // The admin app runs the operator commands (POST /admin/commands) as the operator role; the CLI
  // run where the break-glass login is (key rotations, retention:run, the first admin) as its own.
  admin: 'gateway_operator',
  cli: 'gateway_breakglass',
  // A person's read-only login (psql, a reporting tool): no app connects with it.
  viewer: 'gateway_viewer',
} as const;
export type RoleOwner = keyof typeof APP_ROLES;
export type GatewayRole = (typeof APP_ROLES)[RoleOwner];
export const GATEWAY_ROLES: readonly GatewayRole[] = [...new Set(Object.values(APP_ROLES))];

/** The schemas that hold the gateway's tables (the vault has its own, see the init migration). */
export const GATEWAY_SCHEMAS = ['public', 'vault'] as const;
