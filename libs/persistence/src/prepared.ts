import type { Pool, PoolClient } from 'pg';
import type { DataSource, EntityManager } from 'typeorm';

/**
 * A statement of the hot path, named, so each pooled connection parses and plans it once and then
 * only binds and executes it (why: docs/performance.md). It runs on the pool TypeORM opened, past TypeORM's query runner, and
 * resolves to the rows (also for INSERT/UPDATE … RETURNING). Errors are node-postgres's, with the
 * SQLSTATE in `code`, as through TypeORM.
 *
 * Inside a transaction pass its EntityManager: the statement runs on that transaction's connection.
 */
export function preparedStatement<R>(name: string, text: string): (db: DataSource | EntityManager, values: unknown[]) => Promise<R[]> {
  return async (db, values) => (await connectionOf(db).query<R & object>({ name, text, values })).rows;
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
