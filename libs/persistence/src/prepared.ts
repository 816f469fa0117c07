import type { Pool, PoolClient } from 'pg';
import type { DataSource, EntityManager } from 'typeorm';

/** The key in a data source's `extra` (dataSourceOptions) that says whether preparedStatement() names its statements. */
export const PREPARED_STATEMENTS = 'gatewayPreparedStatements';

/**
 * A statement of the hot path, named, so each pooled connection parses and plans it once and then
 * only binds and executes it (why: docs/decisions/0002-prepared-statements-on-the-hot-path.md). It
 * runs on the pool TypeORM opened, past TypeORM's query runner, and
 * resolves to the rows (also for INSERT/UPDATE … RETURNING). Errors are node-postgres's, with the
 * SQLSTATE in `code`, as through TypeORM.
 *
 * Inside a transaction pass its EntityManager: the statement runs on that transaction's connection.
 *
 * With DATABASE_PREPARED_STATEMENTS=false (the data source's settings, dataSourceOptions) the same
 * SQL goes unnamed: parsed and planned at every call, but nothing is left on the server
 * connection, which a pooler in transaction mode may hand to another client next.
 */
export function preparedStatement<R>(name: string, text: string): (db: DataSource | EntityManager, values: unknown[]) => Promise<R[]> {
  return async (db, values) => {
    const query = namesStatements(db) ? { name, text, values } : { text, values };
    return (await connectionOf(db).query<R & object>(query)).rows;
  };
}

/** The data source's setting (dataSourceOptions); a data source made without it names its statements. */
function namesStatements(db: DataSource | EntityManager): boolean {
  const source = 'driver' in db ? db : db.connection;
  const extra = (source.options as { extra?: Record<string, unknown> }).extra;
  return extra?.[PREPARED_STATEMENTS] !== false;
}

function connectionOf(db: DataSource | EntityManager): Pool | PoolClient {
  const runner = 'queryRunner' in db ? db.queryRunner : undefined;
  if (runner) {
    // A transaction's manager: its query runner holds the connection the transaction is on.
    const client = (runner as unknown as { databaseConnection?: PoolClient }).databaseConnection;
    if (!client) throw new Error('the transaction has no connection');
    return client;
  }
  const source = 'driver' in db ? db : db.connection;
  return (source.driver as unknown as { master: Pool }).master;
}
