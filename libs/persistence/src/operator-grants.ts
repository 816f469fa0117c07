import { REBILL_CYCLE_INSERT, REBILL_SCHEDULER_UPDATE, RoleGrants, TRANSACTION_INSERT } from './grant-columns';

/** What the operator commands touch: the admin app's role, and the break-glass login's. */
export const OPERATOR_GRANTS: RoleGrants = {
  merchants: {
    select: 'all',
    insert: ['id', 'public_id', 'name', 'key_hash', 'webhook_secrets_kek_id', 'webhook_secret_sealed', 'environment'],
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
  // merchant:set-acquirer seals and sets an account; acquirer:reconcile opens it to ask the acquirer.
  merchant_acquirer_accounts: {
    select: 'all',
    insert: ['merchant_id', 'acquirer', 'account', 'secret_kek_id', 'secret_sealed'],
    update: ['account', 'secret_kek_id', 'secret_sealed', 'updated_at'],
    delete: true,
  },
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

/**
 * Reads for people (psql, reports): what the console shows, never a secret. No key hash, no
 * webhook secret, no operator token hash, no vault, no session; and no write of any kind.
 */
export const VIEWER_GRANTS: RoleGrants = {
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
      'environment',
    ],
  },
  merchant_acquirer_accounts: { select: ['merchant_id', 'acquirer', 'account', 'created_at', 'updated_at'] },
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
};
