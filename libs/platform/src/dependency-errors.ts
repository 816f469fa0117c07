import { errorCodeOf } from './safe-error';

/**
 * The one table of failures that mean "a dependency is unavailable, retry" (HTTP 503), never a
 * bug: the database or the queue is unreachable, or Postgres gave up on a statement because one
 * of the role's bounds ran out. Each answers with a short cause that is logged (with the error's
 * code) instead of the statement or its parameters.
 */
const POSTGRES_CANCELLED: Record<string, string> = {
  // statement_timeout (also a statement cancelled by pg_cancel_backend: either way, nothing committed)
  '57014': 'statement_timeout',
  // lock_timeout (also NOWAIT): the statement did not get its lock in time
  '55P03': 'lock_timeout',
  // idle_in_transaction_session_timeout: the server rolled the transaction back and closed the connection
  '25P03': 'idle_in_transaction_timeout',
  // idle_session_timeout: the server closed an idle connection
  '57P05': 'idle_session_timeout',
};

const CONNECTION_CODES = new Set([
  'ECONNREFUSED',
  'ECONNRESET',
  'ETIMEDOUT',
  'EPIPE',
  'ENOTFOUND',
  '57P01',
  '57P02',
  '57P03',
  '08006',
  '08001',
  '08003',
  '53300',
]);
const CONNECTION_MESSAGES =
  /Connection terminated|timeout exceeded when trying to connect|Connection is closed|Stream isn't writeable|MaxRetriesPerRequest|not queryable/i;
/**
 * TypeORM's own: the connection under a query runner (a transaction) closed, e.g. when the server
 * ended it for idle_in_transaction_session_timeout: the transaction is gone, nothing committed.
 */
const CONNECTION_ERROR_NAMES = new Set(['QueryRunnerProviderAlreadyReleasedError', 'ConnectionIsNotSetError']);

/** Why `e` means a dependency is unavailable (a short name to log), or undefined when it does not. */
export function unavailabilityOf(e: unknown): string | undefined {
  const code = errorCodeOf(e, '');
  if (POSTGRES_CANCELLED[code]) return POSTGRES_CANCELLED[code];
  if (
    CONNECTION_CODES.has(code) ||
    CONNECTION_ERROR_NAMES.has(String((e as Error)?.name)) ||
    CONNECTION_MESSAGES.test(String((e as Error)?.message ?? ''))
  )
    return 'connection';
  return undefined;
}
