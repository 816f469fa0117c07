import { Injectable } from '@nestjs/common';
import { DataSource, EntityManager } from 'typeorm';

/** What a key-encryption-key rotation reads of a vaulted card: enough to rewrap its data key. */
export interface WrappedCardRow {
  token: string;
  merchant_id: string;
  kek_id: string;
  wrapped_key: Buffer;
  ciphertext: Buffer;
}

/** What a re-fingerprinting pass reads: the sealed card and the expiry its dedup slot includes. */
export interface SealedCardKeyRow extends WrappedCardRow {
  exp_year: number;
  exp_month: number;
}

/** The key id a stored fingerprint was made with, in SQL (what precedes the first dot). */
const KID_OF = `split_part(fingerprint, '.', 1)`;

/**
 * The rows of one batch, claimed inside its transaction. Claims lock FOR UPDATE SKIP LOCKED, so
 * two passes running at once take different rows, and the writes commit with the claim or not at all.
 */
export class TokenCardKeyBatch {
  constructor(private readonly tx: EntityManager) {}

  /** Up to `limit` records whose data key is not wrapped by `activeKid`, in token order. */
  claimNotUnderKek(activeKid: string, limit: number): Promise<WrappedCardRow[]> {
    return this.tx.query(
      `SELECT token, merchant_id, kek_id, wrapped_key, ciphertext FROM vault.token_cards
       WHERE kek_id <> $1 ORDER BY token LIMIT $2 FOR UPDATE SKIP LOCKED`,
      [activeKid, limit],
    );
  }

  /** Stores the data keys rewrapped under `activeKid`; the card ciphertext is left as it is. */
  async setWrappedKeys(activeKid: string, tokens: string[], wrappedKeys: Buffer[]): Promise<void> {
    await this.tx.query(
      `UPDATE vault.token_cards AS t SET kek_id = $1, wrapped_key = u.wrapped_key
       FROM unnest($2::text[], $3::bytea[]) AS u(token, wrapped_key) WHERE t.token = u.token`,
      [activeKid, tokens, wrappedKeys],
    );
  }

  /** Up to `limit` records after token `after` whose fingerprint is not under `activeKid`, in token order. */
  claimNotUnderFingerprintKid(activeKid: string, after: string, limit: number): Promise<SealedCardKeyRow[]> {
    return this.tx.query(
      `SELECT token, merchant_id, exp_year, exp_month, kek_id, wrapped_key, ciphertext FROM vault.token_cards
       WHERE ${KID_OF} <> $1 AND token > $2 ORDER BY token LIMIT $3 FOR UPDATE SKIP LOCKED`,
      [activeKid, after, limit],
    );
  }

  /**
   * Gives each token its new fingerprint unless another row of the same merchant already holds that
   * fingerprint and expiry (that row stays the one dedup finds); returns how many rows moved.
   */
  async moveFingerprints(tokens: string[], fingerprints: string[]): Promise<number> {
    const [{ n }]: { n: number }[] = await this.tx.query(
      `WITH moved AS (
         UPDATE vault.token_cards AS t SET fingerprint = u.fingerprint
         FROM unnest($1::text[], $2::text[]) AS u(token, fingerprint)
         WHERE t.token = u.token
           AND NOT EXISTS (SELECT 1 FROM vault.token_cards x
                           WHERE x.merchant_id = t.merchant_id AND x.fingerprint = u.fingerprint AND x.exp_year = t.exp_year AND x.exp_month = t.exp_month)
         RETURNING 1
       )
       SELECT count(*)::int AS n FROM moved`,
      [tokens, fingerprints],
    );
    return n;
  }
}

/**
 * The vault-wide key passes (the operator's KEK rotation and re-fingerprinting): unlike the
 * tokenizer's reads these span every merchant, since every record must end up under the active key.
 */
@Injectable()
export class TokenCardKeysRepository {
  constructor(private readonly db: DataSource) {}

  countNotUnderKek(activeKid: string): Promise<number> {
    return this.db
      .query('SELECT count(*)::int AS n FROM vault.token_cards WHERE kek_id <> $1', [activeKid])
      .then((r: { n: number }[]) => r[0].n);
  }

  async countNotUnderFingerprintKid(activeKid: string): Promise<number> {
    const rows: { n: number }[] = await this.db.query(`SELECT count(*)::int AS n FROM vault.token_cards WHERE ${KID_OF} <> $1`, [
      activeKid,
    ]);
    return rows[0].n;
  }

  /** Rows per fingerprint kid. */
  async countByFingerprintKid(): Promise<Record<string, number>> {
    const rows: { kid: string; n: number }[] = await this.db.query(
      `SELECT ${KID_OF} AS kid, count(*)::int AS n FROM vault.token_cards GROUP BY 1 ORDER BY 1`,
    );
    return Object.fromEntries(rows.map((r) => [r.kid, r.n]));
  }

  /** Runs one batch in its own transaction: its claims and writes commit together. */
  inBatch<T>(work: (batch: TokenCardKeyBatch) => Promise<T>): Promise<T> {
    return this.db.transaction((tx) => work(new TokenCardKeyBatch(tx)));
  }
}
