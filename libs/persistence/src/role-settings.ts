import { createHash, createHmac, pbkdf2Sync, randomBytes } from 'node:crypto';

import type { GatewayRole } from './role-catalogue';

/**
 * Per-role bounds (issue 14, item 8), set with ALTER ROLE … IN DATABASE … SET, so they hold for
 * every session of the role in this database; an operator changes one the same way (see
 * docs/operations/database-roles.md).
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
  gateway_console: APP_TIMEOUTS,
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
  gateway_console: 'DB_PASSWORD_CONSOLE',
  gateway_tokenizer: 'DB_PASSWORD_TOKENIZER',
  gateway_settlement: 'DB_PASSWORD_SETTLEMENT',
  gateway_notifier: 'DB_PASSWORD_NOTIFIER',
  gateway_operator: 'DB_PASSWORD_OPERATOR',
  gateway_breakglass: 'DB_PASSWORD_BREAKGLASS',
  gateway_viewer: 'DB_PASSWORD_VIEWER',
};

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
