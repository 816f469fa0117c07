import { MigrationInterface, QueryRunner } from 'typeorm';
import { applyRoleGrants } from '../roles';

/**
 * The trace of each webhook attempt (docs/operations/tracing.md): the W3C trace id the notifier
 * was in when it made the attempt, null when tracing is off. The console links it to the
 * operator's trace store (TRACE_URL_TEMPLATE). A nullable column without a default: adding it
 * rewrites no partition.
 */
export class AttemptTraces1766400000000 implements MigrationInterface {
  name = 'AttemptTraces1766400000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`ALTER TABLE delivery_attempts ADD COLUMN trace_id text CHECK (trace_id ~ '^[0-9a-f]{32}$')`);
    await applyRoleGrants(q);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query('ALTER TABLE delivery_attempts DROP COLUMN trace_id');
    await applyRoleGrants(q);
  }
}
