import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource } from 'typeorm';
import type { TokenFactsRow } from '@app/contracts';
import { statementBatcher } from '../batching';
import { preparedStatement } from '../prepared';

/** Named columns: a prepared statement's result may not change shape under a later migration. */
const FIND_MANY = preparedStatement<TokenFactsRow & { merchant_id: string }>(
  'token_facts_find_many',
  `SELECT f.merchant_id, f.token, f.masked, f.brand, f.holder, f.exp_year, f.exp_month, f.billing, f.created_at
   FROM unnest($1::char(64)[], $2::uuid[]) AS k (token, merchant_id)
   JOIN token_facts f ON f.token = k.token AND f.merchant_id = k.merchant_id`,
);

/**
 * token_facts: each token's non-secret facts (masked number, brand, holder, expiry, billing),
 * written by the tokenizer in the statement that vaults the card. The api reads them here, as a
 * role that may not read vault.token_cards, so token/retrieve and a token sale's brand never
 * wait on the queue.
 */
@Injectable()
export class TokenFactsRepository {
  /**
   * Concurrent reads go out as one statement (statementBatcher): alone a read waits only for the
   * current turn of the event loop; the reads that piled up behind a pause (a GC, the scheduler)
   * are answered by one round trip instead of one each.
   */
  private readonly findOne: (key: { merchantId: string; token: string }) => Promise<TokenFactsRow | undefined>;

  constructor(@InjectDataSource() private readonly db: DataSource) {
    this.findOne = statementBatcher(async (keys) => {
      const rows = await FIND_MANY(this.db, [keys.map((k) => k.token), keys.map((k) => k.merchantId)]);
      const found = new Map(rows.map(({ merchant_id, ...row }) => [`${merchant_id}|${row.token}`, row]));
      const handedOut = new Set<TokenFactsRow>();
      return keys.map((k) => {
        const row = found.get(`${k.merchantId.toLowerCase()}|${k.token}`);
        if (!row) return undefined;
        // One token read by several callers at once: each gets its own copy.
        if (handedOut.has(row)) return structuredClone(row);
        handedOut.add(row);
        return row;
      });
    });
  }

  /** The token's facts when this merchant has it; another merchant's token is as missing as an unknown one. */
  async find(merchantId: string, token: string): Promise<TokenFactsRow | undefined> {
    // Every token is 64 characters (char(64)): any other length names none, and would fail the cast of the batch's array.
    if (token.length !== 64) return undefined;
    return this.findOne({ merchantId, token });
  }
}
