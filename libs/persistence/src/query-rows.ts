import type { Queryable } from './migrations/1764500000000-merchant-public-ids';

/** A query's rows as the caller's row type (Queryable answers `any`); the call is passed on as it is. */
export async function rowsOf<R>(q: Queryable, ...query: [sql: string, params?: unknown[]]): Promise<R[]> {
  return (await q.query(...query)) as R[];
}

export async function currentDatabase(q: Queryable): Promise<string> {
  const rows = await rowsOf<{ db: string }>(q, 'SELECT current_database() AS db');
  return rows[0].db;
}
