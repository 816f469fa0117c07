import { AcquirerRoutingService } from './acquirer-routing.service';
import { Inject, Injectable } from '@nestjs/common';
import { randomUUID } from 'node:crypto';
import { lastValueFrom, timeout, TimeoutError } from 'rxjs';
import { AuthorizeRequest, DomainError, ErrorCodes, Patterns, PaymentMethods, RebillInput, RebillView, SaleInput } from '@app/contracts';
import { detectBrand } from '@app/card';
import { RebillRow, RebillsRepository, saleSnapshotOf, TransactionRow } from '@app/persistence';
import { findRebillView, planRebill, RebillLifecycle } from '@app/rebills';
import { RemoteError, ReplyTimeoutError, TransportUnavailableError, TypedClient, withJobId } from '@app/messaging';
import { sealJson } from '@app/vault/transit';
import { ApiConfig } from '../config/api.config';
import { GATEWAY_CLIENT } from '../messaging/gateway-client.provider';
import { SaleTermsService } from '../split/sale-terms.service';
import { TokensService } from '../tokens/tokens.service';

export interface RebillOutcome {
  httpStatus: 200 | 202;
  view: RebillView;
}

/**
 * The rebill use cases (docs/merchants/rebills.md). A rebill is a schedule of charges on a vaulted card: the card
 * is vaulted first (its security code serves the first charge only and is never stored), the
 * settlement terms are fixed as for a sale, and the rebill is recorded with its first charge when
 * that falls due today. That charge is then decided as a sale is, within the sale's sync wait;
 * later cycles are the scheduler's (RebillRunner).
 */
@Injectable()
export class RebillService {
  constructor(
    @Inject(GATEWAY_CLIENT) private readonly client: TypedClient,
    private readonly rebills: RebillsRepository,
    private readonly lifecycle: RebillLifecycle,
    private readonly config: ApiConfig,
    private readonly tokens: TokensService,
    private readonly terms: SaleTermsService,
    private readonly routing: AcquirerRoutingService,
  ) {}

  async create(merchantId: string, input: RebillInput, respondAsync: boolean): Promise<RebillOutcome> {
    const p = input.payment;
    // Every cycle charges through the acquirer of the first: refused now if this merchant cannot use it.
    await this.routing.check(merchantId, p.acquirer);
    const method = p.numberOfPayments > 1 ? PaymentMethods.CreditIssuerInstalments : PaymentMethods.CreditOneShot;
    // A token's brand comes from its facts (an unknown token is a 404 before anything is written);
    // a card's from its number, so the split and fee plan are checked before the card is vaulted.
    const known = p.card ? undefined : await this.tokens.retrieve(merchantId, p.tokenCard!);
    const brand = known ? known.brand : (detectBrand(p.card!.cardNumber) ?? '');
    const asSale: SaleInput = {
      order: { reference: input.order.reference, totalAmount: input.order.totalAmount },
      payment: { ...p, method, saveCreditCard: true, generateToken: true },
      billing: input.billing,
      urlReturn: input.urlReturn,
      fraud: input.fraud,
    };
    const terms = await this.terms.termsFor(merchantId, asSale, brand, 'paymentCreditCard');
    const token = known ?? (await this.tokens.add(merchantId, { card: p.card!, flag: p.flag, billing: input.billing }));
    const securityCode = p.card ? p.card.cardSecurityCode : p.cardSecurityCode;

    const plan = planRebill({
      id: randomUUID(),
      merchantId,
      input,
      token,
      method,
      terms,
      retryDays: this.config.rebillRetryDays,
      now: Date.now(),
    });
    const { rebill, charge } = await this.lifecycle.create(plan.rebill, plan.chargeFirst);
    if (!charge) return { httpStatus: 200, view: await this.view(merchantId, rebill) };
    return this.chargeFirst(merchantId, rebill, charge, securityCode, respondAsync);
  }

  /**
   * Sends the rebill's first charge to be decided as a sale is: answered 200 once decided within the sale's
   * sync wait, else 202 (the outcome follows on urlReturn and report).
   */
  private async chargeFirst(
    merchantId: string,
    rebill: RebillRow,
    charge: TransactionRow,
    securityCode: string | undefined,
    respondAsync: boolean,
  ): Promise<RebillOutcome> {
    const request: AuthorizeRequest = {
      transactionId: charge.id,
      merchantId,
      tokenCard: rebill.token_card,
      sealedSecurityCode: securityCode ? await sealJson(this.config.transitKeys, securityCode) : undefined,
      capture: true,
      saveCard: false,
      rebill: { id: rebill.id, merchantInitiated: false },
      recorded: saleSnapshotOf(charge),
    };
    const reply$ = this.client.send(Patterns.CardAuthorize, withJobId(request, charge.id));
    if (respondAsync) {
      reply$.subscribe({ error: () => undefined });
      return { httpStatus: 202, view: await this.view(merchantId, rebill) };
    }
    try {
      await lastValueFrom(reply$.pipe(timeout({ first: this.config.saleSyncWaitMs })));
      return { httpStatus: 200, view: await this.view(merchantId, rebill) };
    } catch (e) {
      // The rebill and its first charge are recorded: a charge whose job could not be queued or
      // was not decided in time is sent again by the scheduler (same job, same operation key).
      // The outcome follows on urlReturn and report: a 202, as for a sale still being decided.
      if (e instanceof TimeoutError || e instanceof ReplyTimeoutError || e instanceof TransportUnavailableError) {
        return { httpStatus: 202, view: await this.view(merchantId, rebill) };
      }
      if (e instanceof RemoteError && e.payload.kind === 'unavailable')
        return { httpStatus: 202, view: await this.view(merchantId, rebill) };
      throw e;
    }
  }

  /** report of a rebill's id: the rebill with every cycle so far; undefined when it is no rebill of this merchant. */
  report(merchantId: string, id: string): Promise<RebillView | undefined> {
    return findRebillView(this.rebills, merchantId, id);
  }

  /**
   * cancel of a rebill's id stops its future cycles (a charge already open is decided if the
   * tokenizer had sent it to the acquirer, else abandoned unsent as 4/101; charges already made are
   * cancelled one by one, as sales). Undefined when it is no rebill.
   */
  async cancel(merchantId: string, id: string, amount: number | undefined): Promise<RebillView | undefined> {
    const found = await this.rebills.find(merchantId, id);
    if (!found) return undefined;
    if (amount !== undefined) {
      throw new DomainError(
        'validation',
        ErrorCodes.InvalidField,
        'A rebill is cancelled whole: send cancel without amount (cancel a charge by its ticket to refund it).',
        'amount',
      );
    }
    const result = await this.lifecycle.cancel(merchantId, id);
    if (result === 'already')
      throw new DomainError('conflict', ErrorCodes.AlreadyCancelled, 'The rebill is already cancelled.', 'transactionId');
    if (result === 'finished')
      throw new DomainError(
        'conflict',
        ErrorCodes.InvalidState,
        'The rebill has completed its schedule: nothing is left to cancel.',
        'transactionId',
      );
    return this.view(merchantId, result ?? found);
  }

  private async view(merchantId: string, row: RebillRow): Promise<RebillView> {
    return (await findRebillView(this.rebills, merchantId, row.id))!;
  }
}
