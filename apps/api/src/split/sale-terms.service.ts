import { Injectable } from '@nestjs/common';
import {
  DomainError,
  ErrorCodes,
  FeeRate,
  FieldProblem,
  MethodKind,
  SaleInput,
  SaleTerms,
  SplitEntryInput,
  SplitErrorCodes,
} from '@app/contracts';
import { FeePlansRepository, isMerchantPublicId, MerchantsRepository, RecipientsRepository } from '@app/persistence';
import { instalmentBand, methodKind, processingFee, validateSplit } from '@app/split';
import { ApiConfig } from '../config/api.config';

/**
 * What a sale is settled by, fixed when it is accepted: the fee rate of its method kind, brand
 * and instalment band, and the split. Everything docs/merchants/split.md 3 can refuse is refused here, before
 * anything is charged; settlement later applies the same terms with the same engine.
 */
@Injectable()
export class SaleTermsService {
  private readonly rates = new Map<string, { rate: FeeRate; expiresAt: number }>();

  constructor(
    private readonly recipients: RecipientsRepository,
    private readonly fees: FeePlansRepository,
    private readonly config: ApiConfig,
    private readonly merchants: MerchantsRepository,
  ) {}

  /** `at`: the body's name for the payment object, for the parameter of each problem (a rebill's is paymentCreditCard). */
  async termsFor(merchantId: string, input: SaleInput, brand: string, at = 'payment'): Promise<SaleTerms> {
    const kind = methodKind(input.payment.method);
    const rate = await this.rate(merchantId, kind, brand, input.payment.numberOfPayments);
    const gross = input.payment.amount;
    const fee = processingFee(gross, rate);
    // Recipient ids are GUIDs: compared and stored lower-case.
    const split = input.payment.split?.map((e) => ({ ...e, recipient: e.recipient?.trim().toLowerCase() || undefined }));
    if (split) {
      const recipients = await this.recipients.statusesForMerchant(
        merchantId,
        split.map((e) => e.recipient ?? ''),
      );
      // Recipient ids are UUIDs: the merchant's public id is looked up only when an entry names
      // something of its shape, to refuse it as the merchant itself rather than as an unknown recipient.
      const merchantPublicId = split.some((e) => isMerchantPublicId(e.recipient ?? ''))
        ? await this.merchants.publicIdOf(merchantId)
        : undefined;
      const problems = validateSplit(split, {
        gross,
        fee,
        merchantId,
        merchantPublicId,
        recipients,
        maxEntries: this.config.splitMaxEntries,
        path: `${at}.split`,
        amountPath: `${at}.amount`,
      });
      if (problems.length) throw DomainError.fields(problems, ErrorCodes.InvalidSplit);
    } else if (fee >= gross) {
      throw DomainError.fields([feeExceeds(`${at}.amount`, fee, gross)], ErrorCodes.InvalidField);
    }
    return { kind, brand, fee: rate, split };
  }

  /**
   * A partial capture is settled on the captured amount, under the terms frozen at the sale: the
   * split must still hold for it (an amount entry larger than what is captured cannot be paid).
   */
  checkCapture(merchantId: string, terms: SaleTerms | undefined, amount: number): void {
    if (!terms) return;
    const fee = processingFee(amount, terms.fee);
    const split: SplitEntryInput[] = terms.split ?? [];
    const problems = split.length
      ? validateSplit(split, {
          gross: amount,
          fee,
          merchantId,
          // The recipients were checked when the sale was accepted.
          recipients: new Map(split.map((e) => [e.recipient ?? '', 'approved' as const])),
          maxEntries: Number.MAX_SAFE_INTEGER,
          amountPath: 'amount',
        })
      : fee >= amount
        ? [feeExceeds('amount', fee, amount)]
        : [];
    if (problems.length) throw DomainError.fields(problems, ErrorCodes.InvalidSplit);
  }

  private async rate(merchantId: string, kind: MethodKind, brand: string, instalments: number): Promise<FeeRate> {
    const key = `${merchantId}|${kind}|${brand}|${instalments}`;
    const now = Date.now();
    const hit = this.rates.get(key);
    if (hit && hit.expiresAt > now) return hit.rate;
    const rate = await this.fees.rateFor(merchantId, kind, brand, instalmentBand(instalments), this.config.defaultFees);
    // Cached as briefly as credentials: a changed plan applies to new sales within MERCHANT_CACHE_MS.
    if (this.config.merchantCacheMs > 0) {
      if (this.rates.size > 10_000) this.rates.clear();
      this.rates.set(key, { rate, expiresAt: now + this.config.merchantCacheMs });
    }
    return rate;
  }
}

function feeExceeds(parameter: string, fee: number, gross: number): FieldProblem {
  return {
    code: SplitErrorCodes.FeeExceedsAmount,
    parameter,
    message: `The processing fee (${fee} cents) is not less than ${parameter} (${gross} cents).`,
  };
}
