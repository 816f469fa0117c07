import { MigrationInterface, QueryRunner } from 'typeorm';

/** Chargebacks as the acquirer reported them: its id makes recording one again a no-op. */
export class Chargebacks1764300000000 implements MigrationInterface {
  name = 'Chargebacks1764300000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`CREATE TABLE chargebacks (
      transaction_id uuid NOT NULL REFERENCES settlements (transaction_id),
      chargeback_id text NOT NULL,
      amount int8 NOT NULL CHECK (amount > 0),
      created_at timestamptz NOT NULL DEFAULT now(),
      PRIMARY KEY (transaction_id, chargeback_id)
    )`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP TABLE chargebacks`);
  }
}
