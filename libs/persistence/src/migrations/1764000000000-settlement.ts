import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Split settlement: recipients the operator approves, per-merchant fee plans, and the payables
 * ledger. `settlements` holds one row per captured transaction with the cumulative cancelled and
 * charged-back cents already turned into payables: it is locked while an event is applied, which
 * is what makes a re-delivered or reordered event write nothing twice.
 */
export class Settlement1764000000000 implements MigrationInterface {
  name = 'Settlement1764000000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`CREATE TABLE recipients (
      id uuid PRIMARY KEY,
      merchant_id uuid NOT NULL REFERENCES merchants (id),
      name text NOT NULL,
      status text NOT NULL DEFAULT 'pending' CHECK (status IN ('pending', 'approved')),
      created_at timestamptz NOT NULL DEFAULT now(),
      approved_at timestamptz
    )`);
    await q.query(`CREATE INDEX recipients_merchant ON recipients (merchant_id)`);

    // band = first instalment count of the band: 1 ({1}), 2 ({2..6}), 7 ({7..12}).
    await q.query(`CREATE TABLE fee_plans (
      merchant_id uuid NOT NULL REFERENCES merchants (id),
      kind text NOT NULL CHECK (kind IN ('credit', 'debit')),
      brand text NOT NULL,
      band smallint NOT NULL CHECK (band IN (1, 2, 7)),
      rate_ppm integer NOT NULL CHECK (rate_ppm >= 0 AND rate_ppm < 1000000),
      fixed int8 NOT NULL CHECK (fixed >= 0),
      updated_at timestamptz NOT NULL DEFAULT now(),
      PRIMARY KEY (merchant_id, kind, brand, band)
    )`);

    await q.query(`CREATE TABLE settlements (
      transaction_id uuid PRIMARY KEY REFERENCES transactions (id),
      merchant_id uuid NOT NULL,
      gross int8 NOT NULL CHECK (gross > 0),
      fee int8 NOT NULL CHECK (fee >= 0),
      instalments smallint NOT NULL,
      split jsonb NOT NULL,
      captured_on date NOT NULL,
      cancelled int8 NOT NULL DEFAULT 0 CHECK (cancelled >= 0),
      charged_back int8 NOT NULL DEFAULT 0 CHECK (charged_back >= 0),
      created_at timestamptz NOT NULL DEFAULT now(),
      CHECK (cancelled + charged_back <= gross)
    )`);

    // kind capture: one row per party × instalment; cancel/chargeback: one debit row per party and
    // event, with gross = the debit (cents leave the party) and fee = 0 (the operator keeps it).
    await q.query(`CREATE TABLE payables (
      id bigserial PRIMARY KEY,
      transaction_id uuid NOT NULL REFERENCES settlements (transaction_id),
      merchant_id uuid NOT NULL,
      recipient_id uuid,
      kind text NOT NULL CHECK (kind IN ('capture', 'cancel', 'chargeback')),
      instalment smallint NOT NULL,
      due_date date NOT NULL,
      gross int8 NOT NULL,
      fee int8 NOT NULL,
      net int8 NOT NULL,
      status text NOT NULL DEFAULT 'pending',
      created_at timestamptz NOT NULL DEFAULT now(),
      CHECK (gross = fee + net)
    )`);
    await q.query(`CREATE INDEX payables_transaction ON payables (transaction_id)`);
    await q.query(`CREATE INDEX payables_recipient ON payables (recipient_id, due_date) WHERE recipient_id IS NOT NULL`);
    await q.query(`CREATE INDEX payables_merchant ON payables (merchant_id, due_date)`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP TABLE payables`);
    await q.query(`DROP TABLE settlements`);
    await q.query(`DROP TABLE fee_plans`);
    await q.query(`DROP TABLE recipients`);
  }
}
