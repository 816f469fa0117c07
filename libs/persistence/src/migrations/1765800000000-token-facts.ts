import { MigrationInterface, QueryRunner } from 'typeorm';
import { applyRoleGrants } from '../roles';

/**
 * token_facts: the non-secret facts of each vaulted token, the columns vault.token_cards already
 * holds in clear (masked number, brand, holder, expiry, billing, created_at), by merchant. The api
 * reads them itself (SELECT here only, never on vault.*).
 *
 * A trigger on vault.token_cards projects each new vault row in the transaction that inserts it,
 * whoever the writer is (this release's tokenizer, the release before it during a rolling deploy,
 * a restore), so a token missing here does not exist and the api answers "not found" itself,
 * without asking the vault. The function runs as its owner (SECURITY DEFINER, fixed
 * search_path): the tokenizer role needs no grant on token_facts. Tokens vaulted before are
 * copied from the vault's clear columns, under a lock that holds off new vault rows until the
 * trigger and the copy are committed, so none is missed. Nothing of the ciphertext, wrapped keys
 * or fingerprints is copied: key rotation and re-fingerprinting never change a row here.
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
    await q.query(`CREATE FUNCTION project_token_facts() RETURNS trigger LANGUAGE plpgsql SECURITY DEFINER SET search_path = public, pg_temp AS $$
      BEGIN
        INSERT INTO public.token_facts (token, merchant_id, masked, brand, holder, exp_year, exp_month, billing, created_at)
        VALUES (NEW.token, NEW.merchant_id, NEW.masked, NEW.brand, NEW.holder, NEW.exp_year, NEW.exp_month, NEW.billing, NEW.created_at)
        -- A vault row written again under its token (a restore): its facts are already there.
        ON CONFLICT (token) DO NOTHING;
        RETURN NULL;
      END $$`);
    await q.query(`REVOKE ALL ON FUNCTION project_token_facts() FROM PUBLIC`);
    await q.query(
      `CREATE TRIGGER token_cards_project AFTER INSERT ON vault.token_cards FOR EACH ROW EXECUTE FUNCTION project_token_facts()`,
    );
    await q.query(`INSERT INTO token_facts (token, merchant_id, masked, brand, holder, exp_year, exp_month, billing, created_at)
      SELECT token, merchant_id, masked, brand, holder, exp_year, exp_month, billing, created_at FROM vault.token_cards`);
    await applyRoleGrants(q);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP TRIGGER IF EXISTS token_cards_project ON vault.token_cards`);
    await q.query(`DROP FUNCTION IF EXISTS project_token_facts()`);
    await q.query(`DROP TABLE token_facts`);
  }
}
