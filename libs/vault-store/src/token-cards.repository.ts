import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource } from 'typeorm';
import { Billing, TokenFactsRow } from '@app/contracts';
import { columns, inKeyOrder, runDistinctGroups, statementBatcher } from '@app/persistence/batching';
import { preparedStatement } from '@app/persistence/prepared';

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

/**
 * Vaults several cards in one statement (the batch of concurrent adds, see `insertOrFindDuplicate`):
 * for each input row (`ord`), the row this merchant already has for the card and expiry under any
 * fingerprint key still in the ring (`$13`/`$14`: the item's ordinal and one known fingerprint per
 * element), else the new row under the active key. Answers one row per item that found or inserted
 * one, tagged with its `ord`.
 */
const INSERT_OR_FIND_MANY = preparedStatement<TokenCardRow & { ord: number }>(
  'token_cards_insert_or_find',
  `WITH input AS (
     SELECT * FROM unnest($1::char(64)[], $2::uuid[], $3::text[], $4::smallint[], $5::smallint[], $6::text[], $7::text[],
                          $8::text[], $9::jsonb[], $10::text[], $11::bytea[], $12::bytea[]) WITH ORDINALITY
       AS i (token, merchant_id, fingerprint, exp_year, exp_month, masked, brand, holder, billing, kek_id, wrapped_key, ciphertext, ord)
   ), found AS (
     SELECT DISTINCT ON (i.ord) i.ord, ${VIEW_COLUMNS.split(', ')
       .map((c) => `t.${c}`)
       .join(', ')}
     FROM input i
     JOIN unnest($13::int[], $14::text[]) AS k (ord, fingerprint) ON k.ord = i.ord
     JOIN vault.token_cards t
       ON t.merchant_id = i.merchant_id AND t.fingerprint = k.fingerprint AND t.exp_year = i.exp_year AND t.exp_month = i.exp_month
     ORDER BY i.ord, t.fingerprint = i.fingerprint DESC
   ), inserted AS (
     INSERT INTO vault.token_cards
       (token, merchant_id, fingerprint, exp_year, exp_month, masked, brand, holder, billing, kek_id, wrapped_key, ciphertext)
     SELECT token, merchant_id, fingerprint, exp_year, exp_month, masked, brand, holder, billing, kek_id, wrapped_key, ciphertext
     FROM input i WHERE NOT EXISTS (SELECT 1 FROM found f WHERE f.ord = i.ord)
     ORDER BY i.ord
     ON CONFLICT (merchant_id, fingerprint, exp_year, exp_month) DO NOTHING
     RETURNING ${VIEW_COLUMNS}
   )
   SELECT i.ord, ${VIEW_COLUMNS.split(', ')
     .map((c) => `n.${c}`)
     .join(', ')} FROM inserted n JOIN input i ON i.token = n.token
   UNION ALL SELECT * FROM found`,
);

/**
 * The sealed records of several tokens in one statement (the batch of concurrent card loads, see
 * `findSealedByMerchantAndToken`), each with the merchant it was asked for.
 */
const FIND_SEALED_MANY = preparedStatement<SealedTokenCardRow & { merchant_id: string }>(
  'token_cards_find_sealed_many',
  `SELECT t.merchant_id, t.token, t.holder, t.brand, t.kek_id, t.wrapped_key, t.ciphertext
   FROM unnest($1::char(64)[], $2::uuid[]) AS k (token, merchant_id)
   JOIN vault.token_cards t ON t.token = k.token AND t.merchant_id = k.merchant_id`,
);

/** What makes two adds the same card for dedup: one merchant, one card under the active key, one expiry. */
const dedupKey = (c: NewTokenCard): string => `${c.merchantId}|${c.fingerprint}|${c.expYear}|${c.expMonth}`;

/** The vault table, always scoped by merchant. Plain SQL: this is the tokenizer's hot path. */
@Injectable()
export class TokenCardsRepository {
  /** Concurrent adds go out as one statement (statementBatcher: one round trip and one commit for many cards). */
  private readonly insertOne: (c: NewTokenCard) => Promise<TokenCardRow | undefined>;
  /**
   * Concurrent card loads (token sales, rebill charges) go out as one statement: a charge's card
   * was the one statement of its own on the tokenizer's path (the rest was batched already), so a
   * busy minute of rebills paid a round trip per charge for it.
   */
  private readonly findSealedOne: (key: { merchantId: string; token: string }) => Promise<SealedTokenCardRow | undefined>;

  constructor(@InjectDataSource() private readonly db: DataSource) {
    this.findSealedOne = statementBatcher(async (keys) => {
      const rows = await FIND_SEALED_MANY(this.db, [keys.map((k) => k.token), keys.map((k) => k.merchantId)]);
      const found = new Map(rows.map(({ merchant_id, ...row }) => [`${merchant_id}|${row.token}`, row]));
      const handedOut = new Set<SealedTokenCardRow>();
      return keys.map((k) => {
        const row = found.get(`${k.merchantId.toLowerCase()}|${k.token}`);
        if (!row) return undefined;
        // One token loaded by several charges at once: each gets its own copy of the sealed bytes.
        if (handedOut.has(row)) return { ...row, wrapped_key: Buffer.from(row.wrapped_key), ciphertext: Buffer.from(row.ciphertext) };
        handedOut.add(row);
        return row;
      });
    });
    this.insertOne = statementBatcher(async (items) => {
      // Two adds of one card never share a statement (the second would conflict with the first
      // and find nothing: it runs after, and finds it); rows are inserted in key order, so two
      // batches holding the same cards wait on each other instead of deadlocking.
      const sorted = inKeyOrder(items, dedupKey);
      const outcome = await runDistinctGroups(sorted, dedupKey, async (group) => {
        const rows = await this.insertOrFindMany(group);
        return (item) => rows.get(item);
      });
      const byItem = new Map(sorted.map((item, i) => [item, outcome[i]]));
      return items.map((item) => byItem.get(item)!);
    });
  }

  /**
   * Inserts the card unless this merchant already vaulted the same card and expiry, under any
   * fingerprint key still in the ring; either way returns the one row that now stands for it.
   * One statement: the lookup under every kid and the insert under the active one, for every add
   * in flight at once. Two adds of a new card racing each other both insert under the active kid,
   * so the unique index, not the lookup, decides and the loser reads the winner's row. A
   * re-fingerprinting pass moving the row from an old kid to the active one meanwhile is seen
   * either before (old kid, found) or after (active kid: found, or the insert conflicts and the
   * re-read finds it).
   * Its cost against a plain INSERT … ON CONFLICT is in docs/decisions/0005-token-card-insert-or-find-in-one-statement.md.
   *
   * A row inserted is projected into token_facts (its non-secret facts, what the api reads) by a
   * trigger in the same transaction (migration 1765800000000), so a token anyone was told about
   * always has its facts there.
   */
  async insertOrFindDuplicate(c: NewTokenCard): Promise<TokenCardRow> {
    const row = await this.insertOne(c);
    if (row) return row;
    // Lost a race: a concurrent add inserted this card after our statement's snapshot.
    const existing = await this.findByMerchantAndFingerprints(c.merchantId, c.knownFingerprints, c.expYear, c.expMonth);
    if (!existing) throw new Error('dedup conflict without a surviving row');
    return existing;
  }

  /** One statement for a group of adds, no two of one card; the row each item found or inserted. */
  private async insertOrFindMany(items: NewTokenCard[]): Promise<Map<NewTokenCard, TokenCardRow>> {
    const known = items.flatMap((c, i) => c.knownFingerprints.map((fp) => [i + 1, fp] as const));
    const rows = await INSERT_OR_FIND_MANY(this.db, [
      ...columns(
        items,
        (c) => c.token,
        (c) => c.merchantId,
        (c) => c.fingerprint,
        (c) => c.expYear,
        (c) => c.expMonth,
        (c) => c.masked,
        (c) => c.brand,
        (c) => c.holder,
        (c) => (c.billing === null ? null : JSON.stringify(c.billing)),
        (c) => c.kekId,
        (c) => c.wrappedKey,
        (c) => c.ciphertext,
      ),
      known.map(([ord]) => ord),
      known.map(([, fp]) => fp),
    ]);
    const out = new Map<NewTokenCard, TokenCardRow>();
    for (const { ord, ...row } of rows) out.set(items[Number(ord) - 1], row);
    return out;
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

  /** The token's sealed record when this merchant has it (another merchant's token is as missing as an unknown one). */
  async findSealedByMerchantAndToken(merchantId: string, token: string): Promise<SealedTokenCardRow | undefined> {
    // Every token is 64 characters (char(64)): any other length names none, and the batch's cast to char(64) would cut a longer one.
    if (token.length !== 64) return undefined;
    return this.findSealedOne({ merchantId, token });
  }

  async findByMerchantAndToken(merchantId: string, token: string): Promise<TokenCardRow | undefined> {
    const rows: TokenCardRow[] = await this.db.query(
      `SELECT ${VIEW_COLUMNS} FROM vault.token_cards WHERE token = $1 AND merchant_id = $2`,
      [token, merchantId],
    );
    return rows[0];
  }
}
