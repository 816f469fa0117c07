import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Card sales: the transaction with its compare-and-set status version, the outbox that carries
 * its events to the queue, the idempotency records of POSTs, and the sandbox acquirer's call log.
 */
export class Transactions1763900000000 implements MigrationInterface {
  name = 'Transactions1763900000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`CREATE TABLE transactions (
      id uuid PRIMARY KEY,
      merchant_id uuid NOT NULL REFERENCES merchants (id),
      reference text NOT NULL,
      operation smallint NOT NULL,
      status smallint NOT NULL,
      status_version integer NOT NULL DEFAULT 1,
      acquirer integer NOT NULL,
      method smallint NOT NULL,
      instalments smallint NOT NULL,
      currency char(3) NOT NULL,
      amount int8 NOT NULL CHECK (amount > 0),
      captured_amount int8 NOT NULL DEFAULT 0 CHECK (captured_amount >= 0),
      cancelled_amount int8 NOT NULL DEFAULT 0 CHECK (cancelled_amount >= 0),
      masked_card text NOT NULL,
      brand text NOT NULL,
      token_card char(64),
      error_code text NOT NULL DEFAULT '',
      processor jsonb NOT NULL DEFAULT '{}'::jsonb,
      details jsonb NOT NULL DEFAULT '{}'::jsonb,
      url_return text,
      created_at timestamptz NOT NULL DEFAULT now(),
      updated_at timestamptz NOT NULL DEFAULT now(),
      CHECK (captured_amount <= amount AND cancelled_amount <= amount)
    )`);
    // report by reference answers the merchant's latest transaction with it.
    await q.query(`CREATE INDEX transactions_reference ON transactions (merchant_id, reference, created_at DESC)`);

    await q.query(`CREATE TABLE outbox (
      id uuid PRIMARY KEY,
      event text NOT NULL,
      aggregate_id uuid NOT NULL,
      payload jsonb NOT NULL,
      created_at timestamptz NOT NULL DEFAULT now(),
      published_at timestamptz
    )`);
    await q.query(`CREATE INDEX outbox_unpublished ON outbox (created_at) WHERE published_at IS NULL`);

    await q.query(`CREATE TABLE idempotency_keys (
      merchant_id uuid NOT NULL,
      key text NOT NULL,
      request_hash bytea NOT NULL,
      response_status integer,
      response_body jsonb,
      created_at timestamptz NOT NULL DEFAULT now(),
      PRIMARY KEY (merchant_id, key)
    )`);
    await q.query(`CREATE INDEX idempotency_keys_created ON idempotency_keys (created_at)`);

    // The sandbox acquirer's record of every call it received (tests count them). A repeated
    // operation key is recorded as a repeat and answered from the first call: the partial
    // unique index is what makes it the same charge, across processes and crashes.
    await q.query(`CREATE TABLE sandbox_calls (
      id bigserial PRIMARY KEY,
      operation_key text NOT NULL,
      kind text NOT NULL,
      repeat boolean NOT NULL DEFAULT false,
      masked_pan text,
      amount int8,
      tid text,
      result jsonb NOT NULL,
      created_at timestamptz NOT NULL DEFAULT now()
    )`);
    await q.query(`CREATE UNIQUE INDEX sandbox_calls_once ON sandbox_calls (operation_key) WHERE NOT repeat`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP TABLE sandbox_calls`);
    await q.query(`DROP TABLE idempotency_keys`);
    await q.query(`DROP TABLE outbox`);
    await q.query(`DROP TABLE transactions`);
  }
}
