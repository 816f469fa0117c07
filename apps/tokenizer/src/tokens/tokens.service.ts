import { Injectable, Logger } from '@nestjs/common';
import { randomBytes } from 'node:crypto';
import {
  Billing,
  ClearCard,
  DomainError,
  ErrorCodes,
  TokenAddRequest,
  tokenNotFound,
  TokenRetrieveRequest,
  TokenView,
  tokenViewOf,
} from '@app/contracts';
import { maskPan, validateCard, ValidCard } from '@app/card';
import { openJson } from '@app/vault/transit';
import { cardFingerprints, openCardRecord, sealCardRecord } from '@app/vault/records';
import { TokenCardRow, TokenCardsRepository } from '@app/vault-store';
import { TokenizerConfig } from '../config/tokenizer.config';

/** The vault's token use cases. The only code that ever sees a clear card number. */
@Injectable()
export class TokensService {
  private readonly logger = new Logger(TokensService.name);

  constructor(
    private readonly repo: TokenCardsRepository,
    private readonly config: TokenizerConfig,
  ) {}

  async add(req: TokenAddRequest): Promise<TokenView> {
    const card = await this.openValidated(req.sealedCard, req.flag);
    return tokenViewOf(await this.store(req.merchantId, card, req.billing ?? null));
  }

  /** Opens a sealed card and validates it again: the tokenizer trusts no caller, not even the API. */
  async openValidated(sealedCard: string, flag?: string): Promise<ValidCard> {
    const card = await this.open(sealedCard);
    const checked = validateCard({ ...card, flag });
    if (!checked.ok) throw DomainError.fromPayload(checked.error);
    return checked.card;
  }

  /** Vaults a card for a merchant (or finds the token it already has for the same card and expiry). */
  async store(merchantId: string, card: ValidCard, billing: Billing | null): Promise<TokenCardRow> {
    const { pan, holder, expYear, expMonth, brand } = card;
    const { keys } = this.config;
    // Random, not derived from the card: a token reveals nothing even to someone holding keys.
    const token = randomBytes(32).toString('hex');
    // The security code is deliberately not part of what is stored.
    const sealed = sealCardRecord(keys.kek, { pan, expYear, expMonth }, { merchantId, token });
    const fingerprints = cardFingerprints(keys.fingerprint, merchantId, pan);
    return this.repo.insertOrFindDuplicate({
      token,
      merchantId,
      fingerprint: fingerprints[0],
      knownFingerprints: fingerprints,
      expYear,
      expMonth,
      masked: maskPan(pan),
      brand,
      holder,
      billing,
      kekId: sealed.kekId,
      wrappedKey: sealed.wrappedKey,
      ciphertext: sealed.ciphertext,
    });
  }

  /** The clear card behind a merchant's token, for an authorization; another merchant's token is missing. */
  async loadCard(merchantId: string, token: string): Promise<ValidCard> {
    const row = await this.repo.findSealedByMerchantAndToken(merchantId, token);
    if (!row) throw tokenNotFound('payment.tokenCard');
    const { pan, expYear, expMonth } = openCardRecord(
      this.config.keys.kek,
      { kekId: row.kek_id, wrappedKey: row.wrapped_key, ciphertext: row.ciphertext },
      { merchantId, token: row.token },
    );
    return { pan, expYear, expMonth, holder: row.holder, brand: row.brand as ValidCard['brand'] };
  }

  /**
   * The api reads token_facts itself; this answers an api of the release before it, during a
   * rolling deploy.
   */
  async retrieve(req: TokenRetrieveRequest): Promise<TokenView> {
    const row = await this.repo.findByMerchantAndToken(req.merchantId, req.token);
    // Another merchant's token answers exactly like a missing one.
    if (!row) throw tokenNotFound('token');
    return tokenViewOf(row);
  }

  private async open(sealedCard: string): Promise<ClearCard> {
    try {
      return await openJson<ClearCard>(this.config.keys.transit, sealedCard);
    } catch (e) {
      // A payload we cannot open means mismatched transit keys between api and tokenizer.
      this.logger.error(`cannot open sealed card: ${(e as Error).name}`);
      throw new DomainError('unavailable', ErrorCodes.ServiceUnavailable, 'The card vault could not read the request; retry later.');
    }
  }
}
