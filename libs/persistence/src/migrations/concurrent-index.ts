import type { QueryRunner } from 'typeorm';

/**
 * Builds an index CONCURRENTLY (writers go on meanwhile; the migration runs outside a transaction,
 * `transaction = false`): one that exists and is valid is kept, one a failed run left INVALID is
 * dropped and built again. `definition` is what follows ON, e.g. `deliveries (created_at, id)`.
 */
export async function buildIndexConcurrently(q: QueryRunner, name: string, definition: string, unique = false): Promise<void> {
  const [state]: { valid: boolean }[] = await q.query(
    `SELECT i.indisvalid AS valid FROM pg_index i JOIN pg_class c ON c.oid = i.indexrelid
     WHERE c.relname = $1 AND c.relnamespace = 'public'::regnamespace`,
    [name],
  );
  if (state?.valid) return;
  if (state) await q.query(`DROP INDEX CONCURRENTLY ${name}`);
  await q.query(`CREATE ${unique ? 'UNIQUE ' : ''}INDEX CONCURRENTLY ${name} ON ${definition}`);
}

/** Runs `work` in a transaction of the migration's own (one with `transaction = false`). */
export async function inTransaction(q: QueryRunner, work: () => Promise<void>): Promise<void> {
  await q.startTransaction();
  try {
    await work();
    await q.commitTransaction();
  } catch (e) {
    await q.rollbackTransaction();
    throw e;
  }
}
