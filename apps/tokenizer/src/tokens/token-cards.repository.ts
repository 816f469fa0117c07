import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource } from 'typeorm';
import { Billing } from '@app/contracts';

export interface NewTokenCard {
  token: string;
  merchantId: string;
  fingerprint: string;
  expYear: number;
  expMonth: number;
  masked: string;
  brand: string;
  holder: string;
  billing: Billing | null;
  kekId: string;
  wrappedKey: Buffer;
  ciphertext: Buffer;
}

export interface TokenCardRow {
  token: string;
  masked: string;
  brand: string;
  holder: string;
  exp_year: number;
  exp_month: number;
  billing: Billing | null;
  created_at: Date;
}

export interface SealedTokenCardRow {
  token: string;
  holder: string;
  brand: string;
  kek_id: string;
  wrapped_key: Buffer;
  ciphertext: Buffer;
}

const VIEW_COLUMNS = 'token, masked, brand, holder, exp_year, exp_month, billing, created_at';

/** The vault table, always scoped by merchant. Plain SQL: this is the tokenizer's hot path. */
@Injectable()
export class TokenCardsRepository {
  constructor(@InjectDataSource() private readonly db: DataSource) {}

  /**
   * Inserts the card unless this merchant already vaulted the same card and expiry; either way
   * returns the one row that now stands for it. The unique index, not a prior SELECT, decides,
   * so concurrent adds of one card converge on one token.
   */
  async insertOrFindDuplicate(c: NewTokenCard): Promise<TokenCardRow> {
    const inserted: TokenCardRow[] = await this.db.query(
      `INSERT INTO vault.token_cards
         (token, merchant_id, fingerprint, exp_year, exp_month, masked, brand, holder, billing, kek_id, wrapped_key, ciphertext)
       VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12)
       ON CONFLICT (merchant_id, fingerprint, exp_year, exp_month) DO NOTHING
       RETURNING ${VIEW_COLUMNS}`,
      [c.token, c.merchantId, c.fingerprint, c.expYear, c.expMonth, c.masked, c.brand, c.holder, c.billing, c.kekId, c.wrappedKey, c.ciphertext],
    );
    if (inserted.length > 0) return inserted[0];
    const existing = await this.findByMerchantAndFingerprint(c.merchantId, c.fingerprint, c.expYear, c.expMonth);
    if (!existing) throw new Error('dedup conflict without a surviving row');
    return existing;
  }

  async findByMerchantAndFingerprint(merchantId: string, fingerprint: string, expYear: number, expMonth: number): Promise<TokenCardRow | undefined> {
    const rows: TokenCardRow[] = await this.db.query(
      `SELECT ${VIEW_COLUMNS} FROM vault.token_cards WHERE merchant_id = $1 AND fingerprint = $2 AND exp_year = $3 AND exp_month = $4`,
      [merchantId, fingerprint, expYear, expMonth],
    );
    return rows[0];
  }

  async findSealedByMerchantAndToken(merchantId: string, token: string): Promise<SealedTokenCardRow | undefined> {
    const rows: SealedTokenCardRow[] = await this.db.query(
      'SELECT token, holder, brand, kek_id, wrapped_key, ciphertext FROM vault.token_cards WHERE token = $1 AND merchant_id = $2',
      [token, merchantId],
    );
    return rows[0];
  }

  async findByMerchantAndToken(merchantId: string, token: string): Promise<TokenCardRow | undefined> {
    const rows: TokenCardRow[] = await this.db.query(`SELECT ${VIEW_COLUMNS} FROM vault.token_cards WHERE token = $1 AND merchant_id = $2`, [token, merchantId]);
    return rows[0];
  }
}
