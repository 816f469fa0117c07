import { MigrationInterface, QueryRunner } from 'typeorm';
import { applyRoleGrants } from '../roles';

/**
 * Test and production merchants, and a production merchant's own accounts at real acquirers
 * (issue 33; docs/acquirers.md).
 *
 * - `merchants.environment`: `test` (every sale to the built-in sandbox, as before: existing
 *   merchants stay test merchants) or `production` (each sale to the acquirer its code names).
 *   Set when the merchant is made and never changed: a rebill's later charges then go where its
 *   first one went.
 * - `merchant_acquirer_accounts`: one row per merchant and acquirer code, the acquirer's merchant id
 *   (Cielo MerchantId, e.Rede PV) in clear and its key or token sealed under SECRETS_KEKS, bound
 *   to the merchant and the code, as the webhook secrets are. Only the tokenizer (which calls the
 *   acquirer) and the operator roles (which set accounts and reconcile) read the sealed column;
 *   the api reads which codes a merchant has, nothing else.
 */
export class AcquirerAccounts1766200000000 implements MigrationInterface {
  name = 'AcquirerAccounts1766200000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(
      `ALTER TABLE merchants ADD COLUMN environment text NOT NULL DEFAULT 'test' CHECK (environment IN ('test', 'production'))`,
    );
    await q.query(`CREATE TABLE merchant_acquirer_accounts (
      merchant_id uuid NOT NULL REFERENCES merchants (id) ON DELETE CASCADE,
      acquirer int NOT NULL CHECK (acquirer > 0),
      account text NOT NULL CHECK (length(account) BETWEEN 1 AND 100),
      secret_kek_id text NOT NULL,
      secret_sealed bytea NOT NULL,
      created_at timestamptz NOT NULL DEFAULT now(),
      updated_at timestamptz NOT NULL DEFAULT now(),
      PRIMARY KEY (merchant_id, acquirer)
    )`);
    await applyRoleGrants(q);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query('DROP TABLE merchant_acquirer_accounts');
    await q.query('ALTER TABLE merchants DROP COLUMN environment');
  }
}
