import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Captures and cancels claim their transaction before the acquirer hears of them. Each one is a
 * row of `transaction_operations` (its id is the root of the acquirer's operation key), and the
 * transaction names the one that holds it (`pending_*`), so a second operation waits or is judged
 * against what the first left, and a claim left by a dead worker can be found and resolved.
 * Chargebacks are counted on the transaction too, so a cancel and a chargeback are judged against
 * the same row and can never both take the same cents back.
 */
export class OperationClaims1764400000000 implements MigrationInterface {
  name = 'OperationClaims1764400000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`CREATE TABLE transaction_operations (
      id uuid PRIMARY KEY,
      request_id uuid NOT NULL,
      transaction_id uuid NOT NULL REFERENCES transactions (id),
      merchant_id uuid NOT NULL,
      kind text NOT NULL CHECK (kind IN ('capture', 'cancel')),
      amount int8 NOT NULL CHECK (amount > 0),
      state text NOT NULL DEFAULT 'pending' CHECK (state IN ('pending', 'applied', 'refused', 'voided')),
      operation_key text NOT NULL UNIQUE,
      result jsonb,
      status_version integer,
      created_at timestamptz NOT NULL DEFAULT now(),
      decided_at timestamptz
    )`);
    // A request (a retry with the same Idempotency-Key is the same request) is applied at most
    // once; an attempt the acquirer never saw (voided) does not count, so the request may run again.
    await q.query(`CREATE UNIQUE INDEX transaction_operations_request ON transaction_operations (request_id) WHERE state <> 'voided'`);
    await q.query(`CREATE INDEX transaction_operations_transaction ON transaction_operations (transaction_id, created_at)`);
    // The reconciler looks only at claims still open.
    await q.query(`CREATE INDEX transaction_operations_pending ON transaction_operations (created_at) WHERE state = 'pending'`);

    await q.query(`ALTER TABLE transactions
      ADD COLUMN pending_operation_id uuid,
      ADD COLUMN pending_kind text CHECK (pending_kind IN ('capture', 'cancel')),
      ADD COLUMN pending_amount int8 CHECK (pending_amount > 0),
      ADD COLUMN charged_back_amount int8 NOT NULL DEFAULT 0 CHECK (charged_back_amount >= 0)`);
    await q.query(
      `UPDATE transactions t SET charged_back_amount = s.charged_back FROM settlements s WHERE s.transaction_id = t.id AND s.charged_back > 0`,
    );
    // What was cancelled and charged back never exceeds what it came from. NOT VALID: a row the
    // old race wrote is left for acquirer:reconcile to report instead of failing the migration.
    await q.query(`ALTER TABLE transactions ADD CONSTRAINT transactions_taken_back_fits
      CHECK (cancelled_amount + charged_back_amount <= CASE WHEN captured_amount > 0 THEN captured_amount ELSE amount END) NOT VALID`);
    // The sandbox's books tell a sale's authorization (which captured) from an authorization only.
    await q.query(`ALTER TABLE sandbox_calls ADD COLUMN capture boolean NOT NULL DEFAULT false`);
    await q.query(`CREATE INDEX sandbox_calls_tid ON sandbox_calls (tid)`);
    await q.query(`ALTER TABLE transactions ADD CONSTRAINT transactions_claim_whole
      CHECK ((pending_operation_id IS NULL) = (pending_kind IS NULL) AND (pending_kind IS NULL) = (pending_amount IS NULL))`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP INDEX sandbox_calls_tid`);
    await q.query(`ALTER TABLE sandbox_calls DROP COLUMN capture`);
    await q.query(`ALTER TABLE transactions DROP CONSTRAINT transactions_claim_whole, DROP CONSTRAINT transactions_taken_back_fits,
      DROP COLUMN charged_back_amount, DROP COLUMN pending_amount, DROP COLUMN pending_kind, DROP COLUMN pending_operation_id`);
    await q.query(`DROP TABLE transaction_operations`);
  }
}
