import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Webhook deliveries (one per event × URL; its id is the `webhook-id` the listener dedups on),
 * every attempt made, and the previous webhook secret that still signs during a rotation's grace.
 */
export class Webhooks1764100000000 implements MigrationInterface {
  name = 'Webhooks1764100000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`ALTER TABLE merchants ADD COLUMN previous_webhook_secret text, ADD COLUMN previous_secret_expires_at timestamptz`);
    await q.query(`CREATE TABLE deliveries (
      id uuid PRIMARY KEY,
      merchant_id uuid NOT NULL REFERENCES merchants (id),
      transaction_id uuid NOT NULL,
      status_version integer NOT NULL,
      event text NOT NULL,
      url text NOT NULL,
      body text NOT NULL,
      status text NOT NULL DEFAULT 'pending' CHECK (status IN ('pending', 'sending', 'succeeded', 'failed', 'blocked')),
      attempts integer NOT NULL DEFAULT 0,
      replays integer NOT NULL DEFAULT 0,
      next_attempt_at timestamptz DEFAULT now(),
      last_http_status integer,
      last_error text,
      created_at timestamptz NOT NULL DEFAULT now(),
      updated_at timestamptz NOT NULL DEFAULT now(),
      succeeded_at timestamptz,
      UNIQUE (transaction_id, status_version, event)
    )`);
    await q.query(`CREATE INDEX deliveries_merchant ON deliveries (merchant_id, created_at)`);
    await q.query(`CREATE INDEX deliveries_open ON deliveries (created_at) WHERE status IN ('pending', 'sending')`);
    await q.query(`CREATE INDEX deliveries_status ON deliveries (status, created_at)`);
    await q.query(`CREATE TABLE delivery_attempts (
      id bigserial PRIMARY KEY,
      delivery_id uuid NOT NULL REFERENCES deliveries (id),
      attempt integer NOT NULL,
      started_at timestamptz NOT NULL,
      duration_ms integer NOT NULL,
      http_status integer,
      error_class text CHECK (error_class IN ('timeout', 'dns', 'connect', 'tls', 'ssrf_blocked', 'http_status')),
      response_body text
    )`);
    await q.query(`CREATE INDEX delivery_attempts_delivery ON delivery_attempts (delivery_id, id)`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP TABLE delivery_attempts`);
    await q.query(`DROP TABLE deliveries`);
    await q.query(`ALTER TABLE merchants DROP COLUMN previous_webhook_secret, DROP COLUMN previous_secret_expires_at`);
  }
}
