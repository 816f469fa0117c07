import { MigrationInterface, QueryRunner } from 'typeorm';

/** The reconciler looks for sales still at status 0; they are few, so a partial index keeps it cheap. */
export class PendingSales1764200000000 implements MigrationInterface {
  name = 'PendingSales1764200000000';
  // Built concurrently (outside a transaction) so sales keep being written while it builds.
  transaction = false as const;

  async up(q: QueryRunner): Promise<void> {
    await q.query(`CREATE INDEX CONCURRENTLY IF NOT EXISTS transactions_pending ON transactions (created_at) WHERE status = 0`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP INDEX CONCURRENTLY IF EXISTS transactions_pending`);
  }
}
