import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource } from 'typeorm';
import type { TokenFactsRow } from '@app/contracts';
import { preparedStatement } from '../prepared';

/** Named columns: a prepared statement's result may not change shape under a later migration. */
const FIND = preparedStatement<TokenFactsRow>(
  'token_facts_find',
  'SELECT token, masked, brand, holder, exp_year, exp_month, billing, created_at FROM token_facts WHERE token = $1 AND merchant_id = $2',
);

/**
 * token_facts: each token's non-secret facts (masked number, brand, holder, expiry, billing),
 * written by the tokenizer in the statement that vaults the card. The api reads them here, as a
 * role that may not read vault.token_cards, so token/retrieve and a token sale's brand never
 * wait on the queue.
 */
@Injectable()
export class TokenFactsRepository {
  constructor(@InjectDataSource() private readonly db: DataSource) {}

  /** The token's facts when this merchant has it; another merchant's token is as missing as an unknown one. */
  async find(merchantId: string, token: string): Promise<TokenFactsRow | undefined> {
    const [row] = await FIND(this.db, [token, merchantId]);
    return row;
  }
}
