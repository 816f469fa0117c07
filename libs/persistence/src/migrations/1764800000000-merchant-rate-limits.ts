import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Per-merchant rate limits (issue 14): an operator's override of the api's default budgets, in
 * requests per second, one for writes (sale, authorize, capture, cancel, token/add) and one for
 * reads (report, token/retrieve). NULL: the api's defaults (RATE_LIMIT_WRITES_PER_S,
 * RATE_LIMIT_READS_PER_S). The range is the one merchant:set-limits accepts.
 */
export class MerchantRateLimits1764800000000 implements MigrationInterface {
  name = 'MerchantRateLimits1764800000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`ALTER TABLE merchants
      ADD COLUMN rate_limit_writes_per_s integer,
      ADD COLUMN rate_limit_reads_per_s integer,
      ADD CONSTRAINT merchants_rate_limit_writes_range CHECK (rate_limit_writes_per_s BETWEEN 1 AND 1000000),
      ADD CONSTRAINT merchants_rate_limit_reads_range CHECK (rate_limit_reads_per_s BETWEEN 1 AND 1000000)`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`ALTER TABLE merchants DROP COLUMN rate_limit_writes_per_s, DROP COLUMN rate_limit_reads_per_s`);
  }
}
