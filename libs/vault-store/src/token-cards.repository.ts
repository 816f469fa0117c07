import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource } from 'typeorm';
import { Billing, TokenFactsRow } from '@app/contracts';

export interface NewTokenCard {
  token: string;
  merchantId: string;
  /** Under the active fingerprint key: what a new row is stored with. */
  fingerprint: string;
  /** The same card under every key of the ring (the active one included): what dedup looks for. */
  knownFingerprints: string[];
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

/** What a vault row answers with: its clear columns only, the same facts the api's projection holds. */
export type TokenCardRow = TokenFactsRow;

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
   * Inserts the card unless this merchant already vaulted the same card and expiry, under any
   * fingerprint key still in the ring; either way returns the one row that now stands for it.
   * One statement: the lookup under every kid and the insert under the active one. Two adds of a
   * new card racing each other both insert under the active kid, so the unique index, not the
   * lookup, decides and the loser reads the winner's row. A re-fingerprinting pass moving the row
   * from an old kid to the active one meanwhile is seen either before (old kid, found) or after
   * (active kid: found, or the insert conflicts and the re-read finds it).
   * Its cost against a plain INSERT … ON CONFLICT is in docs/performance.md.
   *
   * A row inserted is projected into token_facts (its non-secret facts, what the api reads) by a
   * trigger in the same transaction (migration 1765800000000), so a token anyone was told about
   * always has its facts there.
   */
  async insertOrFindDuplicate(c: NewTokenCard): Promise<TokenCardRow> {
    const rows: TokenCardRow[] = await this.db.query(
      `WITH found AS (
         SELECT ${VIEW_COLUMNS} FROM vault.token_cards
         WHERE merchant_id = $2 AND fingerprint = ANY($13::text[]) AND exp_year = $4 AND exp_month = $5
         ORDER BY fingerprint = $3 DESC LIMIT 1
       ), inserted AS (
         INSERT INTO vault.token_cards
           (token, merchant_id, fingerprint, exp_year, exp_month, masked, brand, holder, billing, kek_id, wrapped_key, ciphertext)
         SELECT $1::char(64), $2::uuid, $3::text, $4::smallint, $5::smallint, $6::text, $7::text, $8::text, $9::jsonb, $10::text, $11::bytea, $12::bytea
         WHERE NOT EXISTS (SELECT 1 FROM found)
         ON CONFLICT (merchant_id, fingerprint, exp_year, exp_month) DO NOTHING
         RETURNING ${VIEW_COLUMNS}
       )
       SELECT * FROM inserted UNION ALL SELECT * FROM found`,
      [
        c.token,
        c.merchantId,
        c.fingerprint,
        c.expYear,
        c.expMonth,
        c.masked,
        c.brand,
        c.holder,
        c.billing,
        c.kekId,
        c.wrappedKey,
        c.ciphertext,
        c.knownFingerprints,
      ],
    );
    if (rows.length > 0) return rows[0];
    // Lost a race: a concurrent add inserted this card after our statement's snapshot.
    const existing = await this.findByMerchantAndFingerprints(c.merchantId, c.knownFingerprints, c.expYear, c.expMonth);
    if (!existing) throw new Error('dedup conflict without a surviving row');
    return existing;
  }

  async findByMerchantAndFingerprints(
    merchantId: string,
    fingerprints: string[],
    expYear: number,
    expMonth: number,
  ): Promise<TokenCardRow | undefined> {
    const rows: TokenCardRow[] = await this.db.query(
      `SELECT ${VIEW_COLUMNS} FROM vault.token_cards
       WHERE merchant_id = $1 AND fingerprint = ANY($2::text[]) AND exp_year = $3 AND exp_month = $4
       ORDER BY fingerprint = $5 DESC LIMIT 1`,
      [merchantId, fingerprints, expYear, expMonth, fingerprints[0]],
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
    const rows: TokenCardRow[] = await this.db.query(
      `SELECT ${VIEW_COLUMNS} FROM vault.token_cards WHERE token = $1 AND merchant_id = $2`,
      [token, merchantId],
    );
    return rows[0];
  }
}
