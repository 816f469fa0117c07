/**
 * The operator CLI's commands by where they run. Every ordinary command runs on the admin app
 * (POST /admin/commands/<name>, the operator's token as its bearer): the admin app holds the
 * operator database role, checks the token's role and writes the audit trail where the client
 * cannot skip either. Break-glass commands need key material or the database directly, so they
 * run only where the break-glass login is (never through the admin app).
 */
export const REMOTE_COMMANDS = [
  'acquirer:reconcile',
  'acquirer:void-orphan',
  'audit:list',
  'chargeback:record',
  'fees:set',
  'fees:show',
  'ledger:verify',
  'listener:disable',
  'listener:enable',
  'listener:list',
  'merchant:create',
  'merchant:portal-link',
  'merchant:portal-revoke',
  'merchant:remove-acquirer',
  'merchant:rotate-key',
  'merchant:rotate-webhook-secret',
  'merchant:set-acquirer',
  'merchant:set-limits',
  'merchant:set-webhook-throttle',
  'merchant:show',
  'operator:create',
  'operator:list',
  'operator:revoke',
  'payables:list',
  'rebill:list',
  'rebill:run-due',
  'rebill:show',
  'recipient:approve',
  'recipient:create',
  'recipient:list',
  'webhooks:list',
  'webhooks:recover-cancel',
  'webhooks:replay',
] as const;

/** Key rotations and the retention pass: the database and the key rings themselves. */
export const BREAK_GLASS_COMMANDS = ['vault:rotate-key', 'vault:refingerprint', 'secrets:rotate-key', 'retention:run'] as const;

export type RemoteCommand = (typeof REMOTE_COMMANDS)[number];
export const isRemoteCommand = (name: string): name is RemoteCommand => (REMOTE_COMMANDS as readonly string[]).includes(name);
export const isBreakGlassCommand = (name: string): boolean => (BREAK_GLASS_COMMANDS as readonly string[]).includes(name);
