import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Which fingerprint key made each vault row, indexed without a column of its own (the kid is the
 * fingerprint's prefix, so a column could only disagree with it). The re-fingerprinting pass
 * selects and counts rows by kid through this index.
 */
export class FingerprintKids1764650000000 implements MigrationInterface {
  name = 'FingerprintKids1764650000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`CREATE INDEX token_cards_fingerprint_kid ON vault.token_cards (split_part(fingerprint, '.', 1), token)`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP INDEX vault.token_cards_fingerprint_kid`);
  }
}
