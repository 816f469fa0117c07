import { OPERATOR_GRANTS, VIEWER_GRANTS } from './operator-grants';
import { REBILL_CYCLE_INSERT, REBILL_INSERT, REBILL_SCHEDULER_UPDATE, RoleGrants, TRANSACTION_INSERT } from './grant-columns';
import type { GatewayRole } from './role-catalogue';

/**
 * Who may do what, per role, per table (schema-qualified when not in public), derived from every
 * statement each app can run. Reading a column in a WHERE, a SET expression or RETURNING needs
 * SELECT on it; SELECT … FOR UPDATE needs UPDATE on some column; a bigserial needs USAGE on its
 * sequence, which is granted wherever the role may INSERT. Nobody gets TRUNCATE or REFERENCES.
 * A table nobody may touch but its owner is listed in OWNER_ONLY_TABLES: the role test fails on
 * a table named in neither place. A new table or column is one line here; a later migration
 * applies the whole map again with applyRoleGrants.
 */
export const ROLE_GRANTS: Readonly<Record<GatewayRole, RoleGrants>> = {
  // The merchant API (/v1): authenticates merchants, records sales (and removes one it could not
  // send), reads transactions, fee plans, recipients and payables, keeps idempotency records, reads
  // the merchant's limits for the rate limiter, and records in the audit trail an address refused
  // after too many failed authentications. No vault, no webhook secrets, nothing of the console's.
  gateway_api: {
    merchants: { select: ['id', 'public_id', 'key_hash', 'rate_limit_writes_per_s', 'rate_limit_reads_per_s', 'environment'] },
    // Which acquirers a production merchant has an account at (a sale to another is refused): never the secret.
    merchant_acquirer_accounts: { select: ['merchant_id', 'acquirer'] },
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
    // token/retrieve and a token sale's brand: a token's non-secret facts, never the vault row.
    token_facts: { select: ['token', 'merchant_id', 'masked', 'brand', 'holder', 'exp_year', 'exp_month', 'billing', 'created_at'] },
    // rebill: created (with its first charge when it starts today), reported, and cancelled by its merchant.
    rebills: { select: 'all', insert: REBILL_INSERT, update: ['state', 'next_due_at', 'version', 'updated_at'] },
    rebill_cycles: { select: 'all', insert: REBILL_CYCLE_INSERT },
  },
  // The operators' console, the merchants' portal and /admin (their own process): the /admin
  // dashboard and the console (as a named operator, audited) read and replay webhook deliveries,
  // disable and enable listeners, start and cancel recoveries, show rebills with their charges, and
  // read and set a merchant's webhook throttle (that one column); operators sign in with their
  // token; the portal checks its links. No vault, no webhook secrets, no merchant keys.
  gateway_console: {
    merchants: { select: ['id', 'public_id', 'webhook_throttle_per_s'], update: ['webhook_throttle_per_s'] },
    operators: {
      select: ['id', 'name', 'role', 'token_hash', 'created_at', 'created_by', 'revoked_at', 'revoked_by', 'last_used_at'],
      update: ['last_used_at'],
    },
    audit_events: {
      select: ['id'],
      insert: ['operator_id', 'operator_name', 'action', 'target', 'origin', 'outcome', 'error_class', 'attempt_id', 'detail'],
    },
    // A rebill's charges, as its page shows them.
    transactions: { select: 'all' },
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
    rebills: { select: 'all' },
    rebill_cycles: { select: 'all' },
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
    // Which connector serves a sale (the merchant's environment), and the merchant's account there.
    merchants: { select: ['id', 'environment'] },
    merchant_acquirer_accounts: { select: 'all' },
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
    // The settlement sweep: captures and cancels published long enough ago whose settlement is
    // behind (their event was lost: Redis forgot it, or its retries ran out while Postgres was down).
    outbox: { select: ['id', 'event', 'aggregate_id', 'published_at'] },
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
    // The event sweep: status changes published long enough ago that have no delivery yet (their
    // event was lost: Redis forgot it, or its retries ran out while Postgres was down).
    outbox: { select: ['id', 'event', 'aggregate_id', 'payload', 'published_at'] },
    // Runs recoveries a page at a time: the page's replays and the cursor and counts in one transaction.
    recoveries: {
      select: 'all',
      update: ['replayed', 'skipped', 'cursor_created_at', 'cursor_id', 'state', 'error', 'finished_at', 'updated_at'],
    },
    // Old attempts go with their day's partition (delivery_attempts_partitions(), run as the owner);
    // the delete is for the attempts of a finished delivery the retention pass deletes.
    delivery_attempts: {
      select: ['delivery_id'],
      insert: ['delivery_id', 'attempt', 'started_at', 'duration_ms', 'http_status', 'error_class', 'response_body', 'trace_id'],
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
  // Reads for people (psql, reports): what the console shows, never a secret.
  gateway_viewer: VIEWER_GRANTS,
};
