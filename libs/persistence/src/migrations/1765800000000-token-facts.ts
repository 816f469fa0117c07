import { MigrationInterface, QueryRunner } from 'typeorm';
import { applyRoleGrants } from '../roles';

/**
 * token_facts: the non-secret facts of each vaulted token, the columns vault.token_cards already
 * holds in clear (masked number, brand, holder, expiry, billing, created_at), by merchant. The api
 * reads them itself (SELECT here only, never on vault.*); the tokenizer inserts a row in the
 * statement that vaults the card. Tokens vaulted before are copied from the vault's clear
 * columns, under a lock that holds off new vault rows until the copy is committed, so none is
 * missed. Nothing of the ciphertext, wrapped keys or fingerprints is copied: key rotation and
 * re-fingerprinting never change a row here.
 */
export class TokenFacts1765800000000 implements MigrationInterface {
  name = 'TokenFacts1765800000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`CREATE TABLE token_facts (
      token char(64) PRIMARY KEY,
      merchant_id uuid NOT NULL,
      masked text NOT NULL,
      brand text NOT NULL,
      holder text NOT NULL,
      exp_year smallint NOT NULL,
      exp_month smallint NOT NULL,
      billing jsonb,
      created_at timestamptz NOT NULL
    )`);
    await q.query(`LOCK TABLE vault.token_cards IN SHARE MODE`);
    await q.query(`INSERT INTO token_facts (token, merchant_id, masked, brand, holder, exp_year, exp_month, billing, created_at)
      SELECT token, merchant_id, masked, brand, holder, exp_year, exp_month, billing, created_at FROM vault.token_cards`);
    await applyRoleGrants(q);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP TABLE token_facts`);
  }
}
