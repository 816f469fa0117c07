import { MigrationInterface, QueryRunner } from 'typeorm';

export class Init1763800000000 implements MigrationInterface {
  name = 'Init1763800000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`CREATE TABLE merchants (
      id uuid PRIMARY KEY,
      name text NOT NULL,
      key_hash bytea NOT NULL,
      webhook_secret text NOT NULL,
      created_at timestamptz NOT NULL DEFAULT now(),
      key_rotated_at timestamptz
    )`);
    // The vault has its own schema so a deployment can grant it to the tokenizer's role alone.
    await q.query(`CREATE SCHEMA IF NOT EXISTS vault`);
    await q.query(`CREATE TABLE vault.token_cards (
      token char(64) PRIMARY KEY,
      merchant_id uuid NOT NULL,
      fingerprint text NOT NULL,
      exp_year smallint NOT NULL,
      exp_month smallint NOT NULL,
      masked text NOT NULL,
      brand text NOT NULL,
      holder text NOT NULL,
      billing jsonb,
      kek_id text NOT NULL,
      wrapped_key bytea NOT NULL,
      ciphertext bytea NOT NULL,
      created_at timestamptz NOT NULL DEFAULT now()
    )`);
    await q.query(`CREATE UNIQUE INDEX token_cards_dedup ON vault.token_cards (merchant_id, fingerprint, exp_year, exp_month)`);
    await q.query(`CREATE INDEX token_cards_kek ON vault.token_cards (kek_id)`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP TABLE vault.token_cards`);
    await q.query(`DROP SCHEMA vault`);
    await q.query(`DROP TABLE merchants`);
  }
}
