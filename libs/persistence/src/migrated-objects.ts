import type { RoleGrants } from './grant-columns';
import { GATEWAY_ROLES, GatewayRole } from './role-catalogue';
import { ROLE_GRANTS } from './role-grants';

/**
 * Every table a migration creates, with the migration that creates it. applyRoleGrants skips a
 * table of ROLE_GRANTS that does not exist yet only when it is named here (an earlier migration
 * runs before that table's), and refuses a name found nowhere here: a misspelled table in the map
 * fails the migration instead of being silently left ungranted. The roles test checks this list
 * against the migrated schema.
 */
export const MIGRATED_TABLES: Readonly<Record<string, string>> = {
  merchants: 'Init1763800000000',
  'vault.token_cards': 'Init1763800000000',
  transactions: 'Transactions1763900000000',
  outbox: 'Transactions1763900000000',
  idempotency_keys: 'Transactions1763900000000',
  sandbox_calls: 'Transactions1763900000000',
  recipients: 'Settlement1764000000000',
  fee_plans: 'Settlement1764000000000',
  settlements: 'Settlement1764000000000',
  payables: 'Settlement1764000000000',
  deliveries: 'Webhooks1764100000000',
  delivery_attempts: 'Webhooks1764100000000',
  chargebacks: 'Chargebacks1764300000000',
  transaction_operations: 'OperationClaims1764400000000',
  operators: 'Operators1764700000000',
  audit_events: 'Operators1764700000000',
  listeners: 'Listeners1765000000000',
  recoveries: 'Recoveries1765200000000',
  portal_links: 'PortalLinks1765400000000',
  delivery_state_counts: 'ConsoleVolume1765500000000',
  delivery_minutes: 'ConsoleVolume1765500000000',
  listener_failure_hours: 'ConsoleVolume1765500000000',
  listener_failure_minutes: 'ConsoleVolume1765500000000',
  console_sessions: 'ConsoleSessions1765600000000',
  token_facts: 'TokenFacts1765800000000',
  rebills: 'Rebills1765900000000',
  rebill_cycles: 'Rebills1765900000000',
  merchant_acquirer_accounts: 'AcquirerAccounts1766200000000',
};

/**
 * Who may EXECUTE each SECURITY DEFINER function (which runs as the tables' owner, so it is a
 * privilege of its own, kept as narrow as a table grant), by its signature as to_regprocedure
 * reads it, with the migration that creates it. applyRoleGrants takes EXECUTE away from PUBLIC and
 * every role and grants it to these; the roles test checks every SECURITY DEFINER function of the
 * schema against this map.
 */
export const FUNCTION_GRANTS: Readonly<Record<string, { migration: string; roles: readonly GatewayRole[] }>> = {
  // Drops old delivery_attempts partitions and makes the coming days': the notifier's pass and retention:run.
  'delivery_attempts_partitions(timestamptz, timestamptz, boolean)': {
    migration: 'Retention1765700000000',
    roles: ['gateway_notifier', 'gateway_operator', 'gateway_breakglass'],
  },
  // Deletes audit events older than a cutoff (never younger than 30 days): the console's pass and retention:run.
  'prune_audit_events(timestamptz, integer)': {
    migration: 'AuditRetention1766100000000',
    roles: ['gateway_console', 'gateway_operator', 'gateway_breakglass'],
  },
};

/** The tables of `grants` that no migration creates (see MIGRATED_TABLES), as "role: table". */
export function unknownGrantTables(grants: Readonly<Record<GatewayRole, RoleGrants>> = ROLE_GRANTS): string[] {
  return GATEWAY_ROLES.flatMap((role) =>
    Object.keys(grants[role] ?? {})
      .filter((table) => !Object.hasOwn(MIGRATED_TABLES, table))
      .map((table) => `${role}: ${table}`),
  );
}

/** Tables only their owner (the migration runner) touches: TypeORM's record of applied migrations. */
export const OWNER_ONLY_TABLES: readonly string[] = ['migrations'];
