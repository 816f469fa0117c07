import { createHash, createHmac, pbkdf2Sync, randomBytes } from 'node:crypto';

import type { Queryable } from './migrations/1764500000000-merchant-public-ids';

/**
 * The Postgres role each app (and the operator CLI) connects as. Roles are cluster-wide; their
 * grants are per database (each database's migration applies them there).
 */
export const APP_ROLES = {
  api: 'gateway_api',
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

/** Every column of the table (table-level privilege), or only these columns. */
export type Columns = 'all' | readonly string[];
export interface TablePrivileges {
  select?: Columns;
  insert?: Columns;
  update?: Columns;
  /** Only where the role's code deletes rows. */
  delete?: true;
}
export type RoleGrants = Readonly<Record<string, TablePrivileges>>;

/**
 * Who may do what, per role, per table (schema-qualified when not in public), derived from every
 * statement each app can run. Reading a column in a WHERE, a SET expression or RETURNING needs
 * SELECT on it; SELECT … FOR UPDATE needs UPDATE on some column; a bigserial needs USAGE on its
 * sequence, which is granted wherever the role may INSERT. Nobody gets TRUNCATE or REFERENCES.
 * A table nobody may touch but its owner is listed in OWNER_ONLY_TABLES: the role test fails on
 * a table named in neither place. A new table or column is one line here; a later migration
 * applies the whole map again with applyRoleGrants.
 */
/** The columns a new transaction (a sale, or a rebill's charge) is recorded with. */
const TRANSACTION_INSERT = [
  'id',
  'merchant_id',
  'reference',
  'operation',
  'status',
  'acquirer',
  'method',
  'instalments',
  'currency',
  'amount',
  'masked_card',
  'brand',
  'token_card',
  'details',
  'url_return',
] as const;
const REBILL_INSERT = [
  'id',
  'merchant_id',
  'reference',
  'period',
  'frequency',
  'date_start',
  'date_end',
  'retry_days',
  'due_shift_days',
  'acquirer',
  'instalments',
  'currency',
  'amount',
  'token_card',
  'masked_card',
  'brand',
  'card_expires',
  'details',
  'url_return',
  'next_cycle',
  'next_attempt',
  'next_due_at',
  'open_transaction_id',
] as const;
const REBILL_CYCLE_INSERT = ['rebill_id', 'cycle', 'attempt', 'transaction_id', 'cycle_date', 'merchant_initiated'] as const;
const REBILL_SCHEDULER_UPDATE = [
  'state',
  'next_cycle',
  'next_attempt',
  'next_due_at',
  'open_transaction_id',
  'suspended_reason',
  'version',
  'updated_at',
] as const;

/** What the operator commands touch: the admin app's role, and the break-glass login's. */
const OPERATOR_GRANTS: RoleGrants = {
  merchants: {
    select: 'all',
    insert: ['id', 'public_id', 'name', 'key_hash', 'webhook_secrets_kek_id', 'webhook_secret_sealed'],
    update: [
      'key_hash',
      'key_rotated_at',
      'webhook_secrets_kek_id',
      'webhook_secret_sealed',
      'previous_webhook_secret_sealed',
      'previous_secret_expires_at',
      'rate_limit_writes_per_s',
      'rate_limit_reads_per_s',
      'webhook_throttle_per_s',
    ],
  },
  operators: {
    select: 'all',
    insert: ['id', 'name', 'role', 'token_hash', 'created_by'],
    update: ['revoked_at', 'revoked_by', 'last_used_at'],
  },
  audit_events: {
    select: 'all',
    insert: ['operator_id', 'operator_name', 'action', 'target', 'origin', 'outcome', 'error_class', 'attempt_id', 'detail'],
  },
  'vault.token_cards': {
    select: ['token', 'merchant_id', 'fingerprint', 'exp_year', 'exp_month', 'kek_id', 'wrapped_key', 'ciphertext'],
    update: ['kek_id', 'wrapped_key', 'fingerprint'],
  },
  transactions: { select: 'all', insert: TRANSACTION_INSERT, update: ['charged_back_amount', 'updated_at'] },
  // rebill:run-due opens what is due as of a time and moves rebills on as the scheduler does.
  rebills: { select: 'all', update: REBILL_SCHEDULER_UPDATE },
  rebill_cycles: { select: 'all', insert: REBILL_CYCLE_INSERT },
  transaction_operations: { select: ['id', 'created_at'] },
  recipients: { select: 'all', insert: ['id', 'merchant_id', 'name'], update: ['status', 'approved_at'] },
  fee_plans: {
    select: 'all',
    insert: ['merchant_id', 'kind', 'brand', 'band', 'rate_ppm', 'fixed'],
    update: ['rate_ppm', 'fixed', 'updated_at'],
  },
  settlements: {
    select: 'all',
    insert: ['transaction_id', 'merchant_id', 'gross', 'fee', 'instalments', 'split', 'captured_on'],
    update: ['charged_back'],
  },
  payables: {
    select: 'all',
    insert: ['transaction_id', 'merchant_id', 'recipient_id', 'kind', 'instalment', 'due_date', 'gross', 'fee', 'net'],
  },
  chargebacks: { select: 'all', insert: ['transaction_id', 'chargeback_id', 'amount'] },
  // retention:run runs every app's retention rule now: DELETE on each pruned table, and SELECT on
  // the columns its rule reads (the key and the age), nothing more.
  sandbox_calls: { select: 'all', delete: true },
  deliveries: { select: 'all', update: ['status', 'replays', 'next_attempt_at', 'updated_at'], delete: true },
  delivery_attempts: { select: ['delivery_id'], delete: true },
  idempotency_keys: { select: ['merchant_id', 'key', 'created_at'], delete: true },
  // … and rebill:run-due records a suspension's event for the tokenizers' relay to publish.
  outbox: { select: ['id', 'published_at'], insert: ['id', 'event', 'aggregate_id', 'payload'], delete: true },
  listeners: {
    select: 'all',
    insert: ['merchant_id', 'origin', 'state', 'disabled_at', 'disabled_by'],
    update: ['state', 'disabled_at', 'disabled_by', 'failing_since', 'consecutive_failures', 'updated_at'],
  },
  // operator:revoke ends the revoked operator's console sessions in its own transaction.
  console_sessions: { select: ['id_hash', 'operator_id', 'ended_at', 'expires_at'], update: ['ended_at'], delete: true },
  portal_links: {
    select: 'all',
    insert: ['id', 'merchant_id', 'expires_at', 'created_by'],
    update: ['revoked_at', 'revoked_by'],
    delete: true,
  },
  // webhooks:replay --merchant starts a recovery and waits for it; webhooks:recover-cancel cancels one.
  recoveries: {
    select: 'all',
    insert: ['id', 'merchant_id', 'origin', 'since', 'states', 'total', 'created_by'],
    update: ['state', 'skipped', 'finished_at', 'updated_at'],
  },
};

export const ROLE_GRANTS: Readonly<Record<GatewayRole, RoleGrants>> = {
  // HTTP: authenticates merchants, records sales (and removes one it could not send), reads
  // transactions, fee plans, recipients and payables, keeps idempotency records, and the /admin
  // dashboard and the console (as a named operator, audited) read and replay webhook deliveries
  // and disable and enable listeners, the rate limiter reads the merchant's limits, and the
  // console's merchant page reads and sets the webhook throttle (that one column). No vault, no
  // webhook secrets.
  gateway_api: {
    merchants: {
      select: ['id', 'public_id', 'key_hash', 'rate_limit_writes_per_s', 'rate_limit_reads_per_s', 'webhook_throttle_per_s'],
      update: ['webhook_throttle_per_s'],
    },
    operators: {
      select: ['id', 'name', 'role', 'token_hash', 'created_at', 'created_by', 'revoked_at', 'revoked_by', 'last_used_at'],
      update: ['last_used_at'],
    },
    audit_events: {
      select: ['id'],
      insert: ['operator_id', 'operator_name', 'action', 'target', 'origin', 'outcome', 'error_class', 'attempt_id', 'detail'],
    },
    transactions: { select: 'all', insert: TRANSACTION_INSERT, delete: true },
    idempotency_keys: {
      select: 'all',
      insert: ['merchant_id', 'key', 'request_hash'],
      update: ['response_status', 'response_body'],
      delete: true,
    },
    fee_plans: { select: 'all' },
    recipients: { select: ['id', 'merchant_id', 'status'] },
    payables: { select: 'all' },
    deliveries: { select: 'all', update: ['status', 'replays', 'next_attempt_at', 'updated_at'] },
    delivery_attempts: { select: 'all' },
    // The console's Listeners page (issue 16): read, and disabled (a row made for a listener never
    // delivered to) and enabled again by an operator; enabling releases the held deliveries.
    listeners: {
      select: 'all',
      insert: ['merchant_id', 'origin', 'state', 'disabled_at', 'disabled_by'],
      update: ['state', 'disabled_at', 'disabled_by', 'failing_since', 'consecutive_failures', 'updated_at'],
    },
    // The console's sign-ins: opened, looked up on each request, ended at sign-out, old ones deleted.
    console_sessions: {
      select: 'all',
      insert: ['id_hash', 'operator_id', 'expires_at', 'created_ip'],
      update: ['ended_at', 'last_seen_at'],
      delete: true,
    },
    // The merchant portal checks each request's link (issued and revoked by the operator CLI only);
    // the retention pass deletes links expired or revoked long ago (RETENTION_PORTAL_LINKS).
    portal_links: { select: ['id', 'merchant_id', 'expires_at', 'revoked_at'], delete: true },
    // The console's Recover page starts a recovery (counted as it is created) and cancels one; the notifier runs it.
    recoveries: {
      select: 'all',
      insert: ['id', 'merchant_id', 'origin', 'since', 'states', 'total', 'created_by'],
      update: ['state', 'skipped', 'finished_at', 'updated_at'],
    },
    // The console overview's counts, kept by triggers on deliveries and delivery_attempts (which
    // run as the tables' owner: no writer of deliveries needs a grant here).
    delivery_state_counts: { select: 'all' },
    delivery_minutes: { select: 'all' },
    listener_failure_hours: { select: 'all' },
    listener_failure_minutes: { select: 'all' },
    // token/retrieve and a token sale's brand: a token's non-secret facts, never the vault row.
    token_facts: { select: ['token', 'merchant_id', 'masked', 'brand', 'holder', 'exp_year', 'exp_month', 'billing', 'created_at'] },
    // rebill: created (with its first charge when it starts today), reported, and cancelled by its merchant.
    rebills: { select: 'all', insert: REBILL_INSERT, update: ['state', 'next_due_at', 'version', 'updated_at'] },
    rebill_cycles: { select: 'all', insert: REBILL_CYCLE_INSERT },
  },
  // The vault (the only app that reads card ciphertext and wrapped keys), sales, captures and
  // cancels with their claims, the outbox relay, the reconcilers, and the sandbox acquirer's log.
  gateway_tokenizer: {
    'vault.token_cards': {
      select: 'all',
      insert: [
        'token',
        'merchant_id',
        'fingerprint',
        'exp_year',
        'exp_month',
        'masked',
        'brand',
        'holder',
        'billing',
        'kek_id',
        'wrapped_key',
        'ciphertext',
      ],
    },
    transactions: {
      select: 'all',
      // A rebill's charges are recorded by the scheduler that opens them.
      insert: TRANSACTION_INSERT,
      update: [
        'status',
        'status_version',
        'captured_amount',
        'cancelled_amount',
        'error_code',
        'processor',
        'token_card',
        'masked_card',
        'brand',
        'updated_at',
        'pending_operation_id',
        'pending_kind',
        'pending_amount',
      ],
    },
    transaction_operations: {
      select: 'all',
      insert: ['id', 'request_id', 'transaction_id', 'merchant_id', 'kind', 'amount', 'operation_key'],
      update: ['state', 'result', 'status_version', 'decided_at'],
    },
    // The retention pass deletes published events and the sandbox's old books (RETENTION_OUTBOX, RETENTION_SANDBOX_CALLS).
    outbox: { select: 'all', insert: ['id', 'event', 'aggregate_id', 'payload'], update: ['published_at'], delete: true },
    sandbox_calls: {
      select: 'all',
      insert: ['operation_key', 'kind', 'repeat', 'masked_pan', 'amount', 'tid', 'result', 'capture', 'initiator'],
      delete: true,
    },
    // The rebill scheduler: opens due charges (a transaction at status 0 and its cycle), and moves
    // a rebill on once its charge is decided (with the outbox event of a suspension).
    rebills: { select: 'all', update: REBILL_SCHEDULER_UPDATE },
    rebill_cycles: { select: 'all', insert: REBILL_CYCLE_INSERT },
  },
  // Split settlement: reads captured transactions, claims their settlement, writes payables, and
  // on a cancel locks the settlement row and raises its cancelled amount.
  gateway_settlement: {
    transactions: { select: ['id', 'merchant_id', 'captured_amount', 'cancelled_amount', 'instalments', 'method', 'details'] },
    settlements: {
      select: 'all',
      insert: ['transaction_id', 'merchant_id', 'gross', 'fee', 'instalments', 'split', 'captured_on'],
      update: ['cancelled'],
    },
    payables: { insert: ['transaction_id', 'merchant_id', 'recipient_id', 'kind', 'instalment', 'due_date', 'gross', 'fee', 'net'] },
  },
  // Webhooks: creates deliveries, claims and finishes attempts, sweeps overdue ones, reads the
  // merchant's signing secrets (and its public id, for the audit trail) and webhook throttle, keeps
  // listener health, disables a listener that keeps failing and records that in the audit trail, and
  // releases deliveries left held while their listener is enabled.
  gateway_notifier: {
    merchants: {
      select: [
        'id',
        'public_id',
        'webhook_secrets_kek_id',
        'webhook_secret_sealed',
        'previous_webhook_secret_sealed',
        'previous_secret_expires_at',
        'webhook_throttle_per_s',
      ],
    },
    deliveries: {
      select: 'all',
      insert: ['id', 'merchant_id', 'transaction_id', 'status_version', 'event', 'url', 'origin', 'body', 'status', 'attempts'],
      // replays: the sweeper releases a delivery held while its listener was being enabled (as a replay).
      // replays: a recovery's pages replay deliveries (as webhooks:replay does).
      update: ['status', 'attempts', 'replays', 'next_attempt_at', 'last_http_status', 'last_error', 'updated_at', 'succeeded_at'],
      // The retention pass deletes finished deliveries (RETENTION_DELIVERIES) with any attempts left.
      delete: true,
    },
    // Runs recoveries a page at a time: the page's replays and the cursor and counts in one transaction.
    recoveries: {
      select: 'all',
      update: ['replayed', 'skipped', 'cursor_created_at', 'cursor_id', 'state', 'error', 'finished_at', 'updated_at'],
    },
    // Old attempts go with their day's partition (delivery_attempts_partitions(), run as the owner);
    // the delete is for the attempts of a finished delivery the retention pass deletes.
    delivery_attempts: {
      select: ['delivery_id'],
      insert: ['delivery_id', 'attempt', 'started_at', 'duration_ms', 'http_status', 'error_class', 'response_body'],
      delete: true,
    },
    listeners: {
      select: 'all',
      insert: ['merchant_id', 'origin', 'failing_since', 'last_success_at', 'last_failure_at', 'consecutive_failures'],
      update: [
        'failing_since',
        'last_success_at',
        'last_failure_at',
        'consecutive_failures',
        'state',
        'disabled_at',
        'disabled_by',
        'updated_at',
      ],
    },
    audit_events: {
      select: ['id'],
      insert: ['operator_id', 'operator_name', 'action', 'target', 'origin', 'outcome', 'error_class', 'attempt_id', 'detail'],
    },
  },
  // The operator CLI: merchants and their keys and webhook secrets, recipients, fee plans,
  // chargebacks (which lock the transaction and its settlement), ledger reports, acquirer
  // reconciliation, webhook listing and replays, listeners disabled and enabled (held deliveries
  // released), merchant portal links issued and revoked, operators and the audit trail, the webhook-secret key rotation, and the vault
  // passes: the key rotation rewraps data keys and the re-fingerprinting pass opens each card to
  // fingerprint it again (never the holder or billing).
  gateway_operator: OPERATOR_GRANTS,
  // The break-glass login: today the operator's grants (its passes need the vault columns and
  // the retention deletes the commands beside them have).
  gateway_breakglass: OPERATOR_GRANTS,
  // Reads for people (psql, reports): what the console shows, never a secret. No key hash, no
  // webhook secret, no operator token hash, no vault, no session; and no write of any kind.
  gateway_viewer: {
    merchants: {
      select: [
        'id',
        'public_id',
        'name',
        'created_at',
        'key_rotated_at',
        'rate_limit_writes_per_s',
        'rate_limit_reads_per_s',
        'webhook_throttle_per_s',
      ],
    },
    operators: { select: ['id', 'name', 'role', 'created_at', 'created_by', 'revoked_at', 'revoked_by', 'last_used_at'] },
    audit_events: { select: 'all' },
    transactions: { select: 'all' },
    transaction_operations: { select: 'all' },
    chargebacks: { select: 'all' },
    recipients: { select: 'all' },
    fee_plans: { select: 'all' },
    settlements: { select: 'all' },
    payables: { select: 'all' },
    deliveries: { select: 'all' },
    delivery_attempts: { select: 'all' },
    listeners: { select: 'all' },
    recoveries: { select: 'all' },
    rebills: { select: 'all' },
    rebill_cycles: { select: 'all' },
  },
};

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
  // Deletes audit events older than a cutoff (never younger than 30 days): the api's pass and retention:run.
  'prune_audit_events(timestamptz, integer)': {
    migration: 'AuditRetention1766100000000',
    roles: ['gateway_api', 'gateway_operator', 'gateway_breakglass'],
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

/**
 * Per-role bounds (issue 14, item 8), set with ALTER ROLE … IN DATABASE … SET, so they hold for
 * every session of the role in this database; an operator changes one the same way (see
 * docs/OPERATIONS.md "Database roles").
 *
 * The apps run small batched reads and writes: single-digit milliseconds alone, tens under load
 * (the batchers put at most 500 rows in one statement). 5 s is two orders of magnitude above the
 * slowest of them under load, so only a statement that is stuck (on a lock, a bad plan, a server
 * in trouble) reaches it; the batcher behind it then fails its callers instead of stalling. Row
 * locks are held for one statement or one short transaction (a claim, a settlement row): 2 s of
 * waiting for one means its holder is stuck. A transaction left idle for 15 s (the outbox relay
 * holds its batch's rows while Redis answers) is one whose process hung: ending it releases its
 * locks for the others.
 *
 * The operator runs batch passes (vault key rotation, ledger:verify over the whole ledger, a
 * re-keying pass): a statement may read the whole vault or ledger, hence 5 minutes. Its lock
 * timeout stays short (5 s): a statement waiting on a lock makes every app statement that wants
 * that lock queue behind it, so an operator pass gives way rather than stall the apps. Between
 * its statements a batch does only in-process work (rewrapping a batch of keys): 1 minute idle
 * in a transaction means the CLI hung.
 */
export interface RoleTimeouts {
  statement_timeout: string;
  lock_timeout: string;
  idle_in_transaction_session_timeout: string;
}
const APP_TIMEOUTS: RoleTimeouts = { statement_timeout: '5s', lock_timeout: '2s', idle_in_transaction_session_timeout: '15s' };
export const ROLE_TIMEOUTS: Readonly<Record<GatewayRole, RoleTimeouts>> = {
  gateway_api: APP_TIMEOUTS,
  gateway_tokenizer: APP_TIMEOUTS,
  gateway_settlement: APP_TIMEOUTS,
  gateway_notifier: APP_TIMEOUTS,
  gateway_operator: { statement_timeout: '5min', lock_timeout: '5s', idle_in_transaction_session_timeout: '1min' },
  gateway_breakglass: { statement_timeout: '5min', lock_timeout: '5s', idle_in_transaction_session_timeout: '1min' },
  // A person's queries: long reads allowed, never a lock held for long.
  gateway_viewer: { statement_timeout: '5min', lock_timeout: '1s', idle_in_transaction_session_timeout: '1min' },
};

/** The environment variable the migration runner reads a role's password from (when set). */
export const ROLE_PASSWORD_VARIABLES: Readonly<Record<GatewayRole, string>> = {
  gateway_api: 'DB_PASSWORD_API',
  gateway_tokenizer: 'DB_PASSWORD_TOKENIZER',
  gateway_settlement: 'DB_PASSWORD_SETTLEMENT',
  gateway_notifier: 'DB_PASSWORD_NOTIFIER',
  gateway_operator: 'DB_PASSWORD_OPERATOR',
  gateway_breakglass: 'DB_PASSWORD_BREAKGLASS',
  gateway_viewer: 'DB_PASSWORD_VIEWER',
};

export const quoteIdent = (name: string): string => `"${name.replace(/"/g, '""')}"`;

/** "vault.token_cards" → "vault"."token_cards"; "merchants" → "public"."merchants". */
export function qualifiedTable(table: string): string {
  const [schema, name] = table.includes('.') ? table.split('.', 2) : ['public', table];
  return `${quoteIdent(schema)}.${quoteIdent(name)}`;
}

function columnList(columns: Columns): string {
  return columns === 'all' ? '' : ` (${columns.map(quoteIdent).join(', ')})`;
}

const roleList = (): string => GATEWAY_ROLES.map(quoteIdent).join(', ');

/** A query's rows as the caller's row type (Queryable answers `any`); the call is passed on as it is. */
async function rowsOf<R>(q: Queryable, ...query: [sql: string, params?: unknown[]]): Promise<R[]> {
  return (await q.query(...query)) as R[];
}

async function currentDatabase(q: Queryable): Promise<string> {
  const rows = await rowsOf<{ db: string }>(q, 'SELECT current_database() AS db');
  return rows[0].db;
}

/**
 * Creates the roles that do not exist yet (LOGIN, nothing else). Safe to run from many databases
 * at once: a role another migration created first (duplicate_object, or unique_violation when
 * both inserted at the same moment) is taken as it is, once its attributes are checked.
 */
export async function createRoles(q: Queryable): Promise<void> {
  for (const role of GATEWAY_ROLES) {
    await q.query(`DO $$ BEGIN
      CREATE ROLE ${quoteIdent(role)} LOGIN NOSUPERUSER NOCREATEDB NOCREATEROLE NOREPLICATION NOBYPASSRLS;
    EXCEPTION WHEN duplicate_object OR unique_violation THEN NULL;
    END $$`);
    // A role that existed before with more power than it needs is brought back to LOGIN only
    // (only then: altering a shared role from concurrent migrations could collide).
    const [r] = await rowsOf<{ ok: boolean }>(
      q,
      `SELECT rolcanlogin AND NOT rolsuper AND NOT rolcreatedb AND NOT rolcreaterole AND NOT rolreplication AND NOT rolbypassrls AS ok FROM pg_roles WHERE rolname = $1`,
      [role],
    );
    if (!r.ok) await q.query(`ALTER ROLE ${quoteIdent(role)} LOGIN NOSUPERUSER NOCREATEDB NOCREATEROLE NOREPLICATION NOBYPASSRLS`);
  }
}

/** Takes every privilege of PUBLIC and of the gateway roles on this database's gateway tables and sequences. */
async function revokeAll(q: Queryable, db: string): Promise<void> {
  const schemas = GATEWAY_SCHEMAS.map(quoteIdent).join(', ');
  await q.query(`REVOKE ALL ON ALL TABLES IN SCHEMA ${schemas} FROM PUBLIC, ${roleList()}`);
  await q.query(`REVOKE ALL ON ALL SEQUENCES IN SCHEMA ${schemas} FROM PUBLIC, ${roleList()}`);
  await q.query(`REVOKE ALL ON ALL FUNCTIONS IN SCHEMA ${schemas} FROM ${roleList()}`);
  await q.query(`REVOKE ALL ON SCHEMA vault FROM PUBLIC, ${roleList()}`);
  await q.query(`REVOKE ALL ON SCHEMA public FROM ${roleList()}`);
  await q.query(`REVOKE ALL ON DATABASE ${quoteIdent(db)} FROM ${roleList()}`);
}

/**
 * The columns of every gateway table that exists now, by table as ROLE_GRANTS names it
 * ("vault.token_cards", "merchants").
 */
async function existingColumns(q: Queryable): Promise<Map<string, Set<string>>> {
  const rows = await rowsOf<{ s: string; t: string; c: string }>(
    q,
    `SELECT table_schema AS s, table_name AS t, column_name AS c FROM information_schema.columns WHERE table_schema = ANY($1::text[])`,
    [GATEWAY_SCHEMAS],
  );
  const out = new Map<string, Set<string>>();
  for (const { s, t, c } of rows) {
    const table = s === 'public' ? t : `${s}.${t}`;
    out.set(table, (out.get(table) ?? new Set()).add(c));
  }
  return out;
}

/**
 * Makes this database's grants exactly ROLE_GRANTS: everything is revoked from the roles and
 * from PUBLIC on the gateway's tables, then the map is granted. A migration that adds a table
 * or a column (and its line in the map) calls this again. The map is always the latest one, so
 * what a later migration creates is left out until that migration grants it (the roles test
 * checks the map names only tables and columns the migrated schema has). Only a table listed in
 * MIGRATED_TABLES is skipped that way: any other name throws before anything is revoked.
 */
export async function applyRoleGrants(q: Queryable, roleGrants: Readonly<Record<GatewayRole, RoleGrants>> = ROLE_GRANTS): Promise<void> {
  // Before any statement: a name no migration creates would otherwise be skipped as "not yet created".
  const unknown = unknownGrantTables(roleGrants);
  if (unknown.length)
    throw new Error(`ROLE_GRANTS names tables no migration creates (misspelled, or missing from MIGRATED_TABLES): ${unknown.join(', ')}`);
  const db = await currentDatabase(q);
  const existing = await existingColumns(q);
  const present = (table: string, columns: Columns | undefined): Columns | undefined =>
    columns === undefined || columns === 'all' ? columns : columns.filter((c) => existing.get(table)?.has(c));
  const nonEmpty = (columns: Columns | undefined): columns is Columns => columns === 'all' || (columns !== undefined && columns.length > 0);
  await revokeAll(q, db);
  // Nobody but the owner creates objects in public (the default before Postgres 15 let anyone).
  await q.query(`REVOKE CREATE ON SCHEMA public FROM PUBLIC`);
  for (const role of GATEWAY_ROLES) {
    const r = quoteIdent(role);
    await q.query(`GRANT CONNECT ON DATABASE ${quoteIdent(db)} TO ${r}`);
    await q.query(`GRANT USAGE ON SCHEMA public TO ${r}`);
    const grants = roleGrants[role];
    if (Object.keys(grants).some((t) => t.startsWith('vault.'))) await q.query(`GRANT USAGE ON SCHEMA vault TO ${r}`);
    for (const [table, granted] of Object.entries(grants)) {
      if (!existing.has(table)) continue; // a known table a later migration creates (and grants)
      const p = { select: present(table, granted.select), insert: present(table, granted.insert), update: present(table, granted.update) };
      const t = qualifiedTable(table);
      if (nonEmpty(p.select)) await q.query(`GRANT SELECT${columnList(p.select)} ON ${t} TO ${r}`);
      if (nonEmpty(p.insert)) {
        await q.query(`GRANT INSERT${columnList(p.insert)} ON ${t} TO ${r}`);
        // The sequences behind the table's serial columns: an INSERT takes their next value.
        const seqs = await rowsOf<{ seq: string }>(
          q,
          `SELECT s.oid::regclass::text AS seq FROM pg_depend d JOIN pg_class s ON s.oid = d.objid
           WHERE d.classid = 'pg_class'::regclass AND d.refclassid = 'pg_class'::regclass AND d.refobjid = $1::regclass AND s.relkind = 'S'`,
          [t],
        );
        for (const { seq } of seqs) await q.query(`GRANT USAGE ON SEQUENCE ${seq} TO ${r}`);
      }
      if (nonEmpty(p.update)) await q.query(`GRANT UPDATE${columnList(p.update)} ON ${t} TO ${r}`);
      if (granted.delete) await q.query(`GRANT DELETE ON ${t} TO ${r}`);
    }
  }
  for (const [signature, { roles }] of Object.entries(FUNCTION_GRANTS)) {
    const [fn] = await rowsOf<{ exists: boolean }>(q, 'SELECT to_regprocedure($1) IS NOT NULL AS exists', [signature]);
    if (!fn.exists) continue; // a later migration creates it (and grants it)
    await q.query(`REVOKE ALL ON FUNCTION ${signature} FROM PUBLIC, ${roleList()}`);
    if (roles.length) await q.query(`GRANT EXECUTE ON FUNCTION ${signature} TO ${roles.map(quoteIdent).join(', ')}`);
  }
}

/** Sets ROLE_TIMEOUTS for this database (ALTER ROLE … IN DATABASE … SET). */
export async function applyRoleTimeouts(q: Queryable): Promise<void> {
  const db = quoteIdent(await currentDatabase(q));
  for (const role of GATEWAY_ROLES) {
    const timeouts = ROLE_TIMEOUTS[role];
    for (const setting of Object.keys(timeouts) as (keyof RoleTimeouts)[]) {
      const value = timeouts[setting];
      await q.query(`ALTER ROLE ${quoteIdent(role)} IN DATABASE ${db} SET ${setting} = '${value.replace(/'/g, "''")}'`);
    }
  }
}

/**
 * Undoes this database's part: every grant and the roles' settings here. A role is dropped only
 * when no other database still holds anything of it (Postgres refuses the DROP then: that is the
 * check, race-free); otherwise it stays, and the returned list says which stayed.
 */
export async function removeRoles(q: Queryable): Promise<GatewayRole[]> {
  const db = await currentDatabase(q);
  await revokeAll(q, db);
  const kept: GatewayRole[] = [];
  for (const role of GATEWAY_ROLES) {
    await q.query(`ALTER ROLE ${quoteIdent(role)} IN DATABASE ${quoteIdent(db)} RESET ALL`);
    await q.query(`DO $$ BEGIN
        DROP ROLE IF EXISTS ${quoteIdent(role)};
      EXCEPTION WHEN dependent_objects_still_exist OR object_in_use THEN
        RAISE NOTICE 'role ${role} is still used by another database: left in place';
      END $$`);
    const [r] = await rowsOf<{ kept: boolean }>(q, 'SELECT EXISTS (SELECT 1 FROM pg_roles WHERE rolname = $1) AS kept', [role]);
    if (r.kept) kept.push(role);
  }
  return kept;
}

/**
 * A SCRAM-SHA-256 verifier for `password` (RFC 5802/7677, as Postgres stores it): ALTER ROLE …
 * PASSWORD with it never sends the password itself, so no server log or statement view shows it.
 */
export function scramVerifier(password: string, salt: Buffer = randomBytes(16), iterations = 4096): string {
  const salted = pbkdf2Sync(password.normalize('NFKC'), salt, iterations, 32, 'sha256');
  const clientKey = createHmac('sha256', salted).update('Client Key').digest();
  const storedKey = createHash('sha256').update(clientKey).digest();
  const serverKey = createHmac('sha256', salted).update('Server Key').digest();
  return `SCRAM-SHA-256$${iterations}:${salt.toString('base64')}$${storedKey.toString('base64')}:${serverKey.toString('base64')}`;
}

/**
 * Sets the password of each role whose variable (ROLE_PASSWORD_VARIABLES) is set, as a SCRAM
 * verifier. Returns the roles it set (never the passwords).
 */
export async function setRolePasswords(q: Queryable, env: NodeJS.ProcessEnv = process.env): Promise<GatewayRole[]> {
  const set: GatewayRole[] = [];
  for (const role of GATEWAY_ROLES) {
    const password = env[ROLE_PASSWORD_VARIABLES[role]];
    if (!password) continue;
    await q.query(`ALTER ROLE ${quoteIdent(role)} PASSWORD '${scramVerifier(password)}'`);
    set.push(role);
  }
  return set;
}

/** Who a connection is, as far as least privilege goes. */
export interface DatabaseIdentity {
  user: string;
  superuser: boolean;
  /** It owns (or is a member of the owner of) a table of the gateway's schemas. */
  ownsTables: boolean;
}

export async function databaseIdentity(q: Queryable): Promise<DatabaseIdentity> {
  const [r] = await rowsOf<{ user: string; superuser: boolean; owns_tables: boolean }>(
    q,
    `SELECT current_user AS user, (SELECT rolsuper FROM pg_roles WHERE rolname = current_user) AS superuser,
       EXISTS (SELECT 1 FROM pg_tables WHERE schemaname = ANY($1::text[]) AND pg_has_role(tableowner, 'MEMBER')) AS owns_tables`,
    [GATEWAY_SCHEMAS],
  );
  return { user: r.user, superuser: r.superuser, ownsTables: r.owns_tables };
}

/**
 * What is wrong with running `app` as this identity, in a sentence naming `variable` and the role
 * to use; undefined when it is a role of its own.
 */
export function identityProblem(id: DatabaseIdentity, app: RoleOwner, variable = 'DATABASE_URL'): string | undefined {
  const what = id.superuser ? 'a superuser' : id.ownsTables ? "the owner of the gateway's tables" : undefined;
  if (!what) return undefined;
  return `${variable} connects as "${id.user}", ${what}: ${app} must connect as its own role ${APP_ROLES[app]} (see docs/OPERATIONS.md, "Database roles")`;
}
