import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource } from 'typeorm';
import type { MerchantEnvironment } from '@app/contracts';
import type { Keyring } from '@app/vault/keyring';
import { openSecret, sealSecret } from '@app/vault/secrets';

/** A merchant's account at one acquirer, secret still sealed (SECRETS_KEKS). */
export interface SealedAcquirerAccount {
  acquirer: number;
  account: string;
  kid: string;
  sealed: Buffer;
  updatedAt: Date;
}

/** Where a merchant's sales go: its environment, and the acquirer codes it has an account at. */
export interface MerchantRouting {
  environment: MerchantEnvironment;
  acquirers: number[];
}

/** The sealed secret is bound to the merchant and the code: a row copied elsewhere does not open. */
const columnOf = (acquirer: number) => `acquirer_secret:${acquirer}`;

export function sealAcquirerSecret(ring: Keyring, merchantId: string, acquirer: number, secret: string): { kid: string; sealed: Buffer } {
  return { kid: ring.active.kid, sealed: sealSecret(ring, secret, { merchantId, column: columnOf(acquirer) }).sealed };
}

/** Throws SecretOpenError (SecretKeyMissingError when `ring` lacks the key) and never says more. */
export function openAcquirerSecret(ring: Keyring, merchantId: string, row: SealedAcquirerAccount): string {
  return openSecret(ring, { kid: row.kid, sealed: row.sealed }, { merchantId, column: columnOf(row.acquirer) });
}

/**
 * Production merchants' accounts at real acquirers (merchant:set-acquirer). The secret is sealed
 * before it reaches this repository and is opened only by the caller that talks to the acquirer.
 */
@Injectable()
export class AcquirerAccountsRepository {
  constructor(@InjectDataSource() private readonly db: DataSource) {}

  /** Sets (or replaces) the merchant's account at `acquirer`; true when one was there before. */
  async set(
    merchantId: string,
    acquirer: number,
    account: string,
    secret: { kid: string; sealed: Buffer },
  ): Promise<{ replaced: boolean }> {
    const rows: { replaced: boolean }[] = await this.db.query(
      `INSERT INTO merchant_acquirer_accounts (merchant_id, acquirer, account, secret_kek_id, secret_sealed)
       VALUES ($1, $2, $3, $4, $5)
       ON CONFLICT (merchant_id, acquirer) DO UPDATE
         SET account = EXCLUDED.account, secret_kek_id = EXCLUDED.secret_kek_id, secret_sealed = EXCLUDED.secret_sealed, updated_at = now()
       RETURNING (xmax <> 0) AS replaced`,
      [merchantId, acquirer, account, secret.kid, secret.sealed],
    );
    return { replaced: rows[0].replaced };
  }

  async remove(merchantId: string, acquirer: number): Promise<boolean> {
    const rows: unknown[] = await this.db.query(
      'DELETE FROM merchant_acquirer_accounts WHERE merchant_id = $1 AND acquirer = $2 RETURNING 1',
      [merchantId, acquirer],
    );
    return rows.length > 0;
  }

  /** The merchant's accounts without their secrets (merchant:show). */
  async list(merchantId: string): Promise<{ acquirer: number; account: string; updatedAt: Date }[]> {
    const rows: { acquirer: number; account: string; updated_at: Date }[] = await this.db.query(
      'SELECT acquirer, account, updated_at FROM merchant_acquirer_accounts WHERE merchant_id = $1 ORDER BY acquirer',
      [merchantId],
    );
    return rows.map((r) => ({ acquirer: r.acquirer, account: r.account, updatedAt: r.updated_at }));
  }

  /** The account with its sealed secret (the tokenizer and acquirer:reconcile only). */
  async sealedOf(merchantId: string, acquirer: number): Promise<SealedAcquirerAccount | undefined> {
    const rows: { acquirer: number; account: string; secret_kek_id: string; secret_sealed: Buffer; updated_at: Date }[] =
      await this.db.query(
        'SELECT acquirer, account, secret_kek_id, secret_sealed, updated_at FROM merchant_acquirer_accounts WHERE merchant_id = $1 AND acquirer = $2',
        [merchantId, acquirer],
      );
    const r = rows[0];
    return r && { acquirer: r.acquirer, account: r.account, kid: r.secret_kek_id, sealed: r.secret_sealed, updatedAt: r.updated_at };
  }

  /** The merchant's environment and acquirer codes (no secret); undefined without such a merchant. */
  async routingOf(merchantId: string): Promise<MerchantRouting | undefined> {
    const rows: { environment: MerchantEnvironment; acquirers: number[] }[] = await this.db.query(
      `SELECT m.environment, ARRAY(SELECT a.acquirer FROM merchant_acquirer_accounts a WHERE a.merchant_id = m.id) AS acquirers
       FROM merchants m WHERE m.id = $1`,
      [merchantId],
    );
    return rows[0] && { environment: rows[0].environment, acquirers: rows[0].acquirers.map(Number) };
  }
}
