import { MigrationInterface, QueryRunner } from 'typeorm';
import { applyRoleGrants } from '../roles';

/**
 * Rebills (issue 18): a merchant's recurring charge on a vaulted card, and its cycles.
 *
 * A rebill row is the schedule and where it stands: the next cycle and dunning attempt, when it
 * falls due, and the one charge in flight (`open_transaction_id`). A charge is a transaction of
 * its own (status 0 when opened, decided like any sale), whose id is derived from (rebill, cycle,
 * attempt): opening the same charge twice hits the transactions primary key, and its acquirer
 * operation key (`<id>-authorize`) is the same wherever it is sent from. A rebill has at most one
 * charge open; the next is opened only once that one is decided and the rebill moved on
 * (compare-and-set on `open_transaction_id`), so each cycle is charged at most once, in order.
 *
 * `sandbox_calls.initiator` records whether the card holder or the merchant started a charge
 * (the sandbox's view of the connector call's `initiator`).
 */
export class Rebills1765900000000 implements MigrationInterface {
  name = 'Rebills1765900000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`CREATE TABLE rebills (
      id uuid PRIMARY KEY,
      merchant_id uuid NOT NULL REFERENCES merchants (id),
      reference text NOT NULL,
      state text NOT NULL DEFAULT 'active' CHECK (state IN ('active', 'suspended', 'cancelled', 'completed')),
      period smallint NOT NULL CHECK (period BETWEEN 1 AND 4),
      frequency smallint NOT NULL CHECK (frequency BETWEEN 1 AND 99),
      date_start date NOT NULL,
      date_end date NOT NULL CHECK (date_end > date_start),
      retry_days smallint[] NOT NULL,
      due_shift_days smallint NOT NULL DEFAULT 0 CHECK (due_shift_days BETWEEN 0 AND 2),
      acquirer int NOT NULL,
      instalments int NOT NULL,
      currency text NOT NULL,
      amount int8 NOT NULL CHECK (amount > 0),
      token_card char(64) NOT NULL,
      masked_card text NOT NULL,
      brand text NOT NULL,
      card_expires date NOT NULL,
      details jsonb NOT NULL,
      url_return text,
      next_cycle int NOT NULL DEFAULT 1,
      next_attempt int NOT NULL DEFAULT 0,
      next_due_at timestamptz,
      open_transaction_id uuid,
      suspended_reason text,
      version int NOT NULL DEFAULT 1,
      created_at timestamptz NOT NULL DEFAULT now(),
      updated_at timestamptz NOT NULL DEFAULT now()
    )`);
    // The scheduler's scan: active rebills with nothing in flight, by due time.
    await q.query(`CREATE INDEX rebills_due ON rebills (next_due_at) WHERE state = 'active' AND open_transaction_id IS NULL`);
    // Charges in flight (the scheduler moves on those whose charge was decided).
    await q.query(`CREATE INDEX rebills_open ON rebills (open_transaction_id) WHERE open_transaction_id IS NOT NULL`);
    await q.query(`CREATE INDEX rebills_merchant ON rebills (merchant_id, created_at DESC, id)`);
    await q.query(`CREATE TABLE rebill_cycles (
      rebill_id uuid NOT NULL REFERENCES rebills (id),
      cycle int NOT NULL,
      attempt int NOT NULL,
      transaction_id uuid NOT NULL UNIQUE REFERENCES transactions (id),
      cycle_date date NOT NULL,
      merchant_initiated boolean NOT NULL,
      created_at timestamptz NOT NULL DEFAULT now(),
      PRIMARY KEY (rebill_id, cycle, attempt)
    )`);
    await q.query(`ALTER TABLE sandbox_calls ADD COLUMN initiator text`);
    await applyRoleGrants(q);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`ALTER TABLE sandbox_calls DROP COLUMN initiator`);
    await q.query(`DROP TABLE rebill_cycles`);
    await q.query(`DROP TABLE rebills`);
  }
}
