import { Injectable, Logger } from '@nestjs/common';
import { safeErrorText } from '@app/platform';
import { AuthorizeRequest, ErrorCodes, Events, TransactionStatus, TransactionView } from '@app/contracts';
import { isExpired, maskPan, ValidCard } from '@app/card';
import { saleDetailsOf, TransactionRow, Transition } from '@app/persistence';
import { RebillLifecycle } from '@app/rebills';
import { openJson } from '@app/vault/transit';
import { AcquirerResult, AcquirerUnavailableError, AcquirerUnreachableError, OperationRef, Route } from '@app/acquirer';
import { TokenizerConfig } from '../config/tokenizer.config';
import { TokensService } from '../tokens/tokens.service';
import { processorOf, recordedRow, viewOfRow } from './payment-answers';
import { TransactionChanges } from './transaction-changes';

/**
 * A sale's authorization with the acquirer. Safe to run twice for the same message (a redelivery
 * after a crash, a retry after a reply timeout): the sale is decided by compare-and-set, and a
 * sale whose authorization may have reached the acquirer before is looked up there before
 * anything is created, so nothing reaches the acquirer that the gateway will not record.
 */
@Injectable()
export class SalesService {
  private readonly logger = new Logger(SalesService.name);

  constructor(
    private readonly changes: TransactionChanges,
    private readonly tokens: TokensService,
    private readonly rebills: RebillLifecycle,
    private readonly config: TokenizerConfig,
  ) {}

  /**
   * `firstDelivery`: the message was never handed out before, so the sale it carries, as the API
   * recorded it, is still undecided (only this job decides a sale, and the reconciler leaves alone
   * a sale whose job exists): no need to read it back. Were it decided after all, the acquirer
   * call repeats the same operation key (the sandbox answers it from its first record; a real
   * acquirer's connector looks the order id up first on any delivery but the first) and the
   * compare-and-set fails, so the recorded outcome is the answer.
   */
  async authorize(req: AuthorizeRequest, firstDelivery = false): Promise<TransactionView> {
    const row = (firstDelivery && recordedRow(req)) || (await this.changes.load(req.merchantId, req.transactionId));
    // Already decided (this is a redelivery): the answer is the recorded outcome.
    if (row.status !== TransactionStatus.Waiting) return this.followUp(req, viewOfRow(row));
    // A rebill cancelled before this charge went to the acquirer (its job was queued, or sent again
    // after being lost): the cancel stops it. Not charged; whatever an earlier try of the same
    // charge left at the acquirer is undone, as for any sale abandoned undecided. A cancel that
    // comes after this point finds the charge in flight, and it is decided.
    if (req.rebill && (await this.rebills.isCancelled(req.rebill.id))) return this.followUp(req, await this.abandon(row));
    // A rebill's charge may be sent again as a new job after the first was lost: always looked up first.
    return this.followUp(req, await this.decideSale(req, row, !firstDelivery || req.rebill !== undefined));
  }

  /**
   * A sale left at status 0 with no authorization job (the API stopped between recording it and
   * queueing it, or the decision could not be recorded): the card is gone, so it is declined with
   * `101`, and whatever the acquirer knows of its authorization is reversed first, so the card is
   * never left charged with an unknown outcome.
   */
  async abandon(row: TransactionRow): Promise<TransactionView> {
    const route = await this.changes.routeOf(row);
    const change: Transition = { status: TransactionStatus.Unauthorized, errorCode: ErrorCodes.NotProcessed };
    // Its account was removed after the sale was taken: the acquirer cannot be asked, so it waits.
    if (typeof route === 'string') throw new Error(`sale ${row.id}: ${route}`);
    const ref: OperationRef = { operationKey: `${row.id}-authorize`, kind: 'authorize', transactionId: row.id, account: route.account };
    const known = await route.connector.inquire(ref);
    if (known) {
      change.processor = processorOf(known);
      if (known.outcome !== 'declined') await this.reverseOrThrow(route, row, known);
    }
    return this.changes.apply(row, change, []);
  }

  /** A rebill's charge, once decided, moves its rebill on (the scheduler does it later if this fails). */
  private async followUp(req: AuthorizeRequest, view: TransactionView): Promise<TransactionView> {
    if (req.rebill && view.status !== TransactionStatus.Waiting) {
      await this.rebills.advance(req.rebill.id, view.id).catch((e: unknown) => {
        this.logger.warn(`rebill ${req.rebill!.id}: not moved on after its charge (the scheduler will): ${safeErrorText(e)}`);
      });
    }
    return view;
  }

  /**
   * `resumed`: this sale's authorization may have reached the acquirer before (a redelivered job, a
   * rebill charge sent again): a real acquirer's create is not idempotent, so the connector looks
   * the sale up by its order id before it creates anything.
   */
  private async decideSale(req: AuthorizeRequest, row: TransactionRow, resumed: boolean): Promise<TransactionView> {
    const { card, securityCode } = await this.cardOf(req);
    let tokenCard: string | undefined;
    if (req.saveCard && req.sealedCard) tokenCard = (await this.tokens.store(req.merchantId, card, req.billing ?? null)).token;
    const amount = Number(row.amount);
    const change: Transition = { status: TransactionStatus.Unauthorized, tokenCard, maskedCard: maskPan(card.pan), brand: card.brand };

    const route = await this.changes.routeOf(row);
    if (isExpired({ year: card.expYear, month: card.expMonth })) {
      change.errorCode = ErrorCodes.CardExpired;
      change.processor = { returnCode: '54', returnMessage: 'Expired card' };
    } else if (typeof route === 'string') {
      // The merchant's account at this acquirer is gone since the API took the sale: not charged.
      change.errorCode = ErrorCodes.AcquirerNotAvailable;
      change.processor = { returnCode: '', returnMessage: route };
    } else {
      await this.authorizeAt(route, { req, row, card, securityCode, resumed }, change);
    }
    return this.changes.apply(
      row,
      change,
      req.capture && change.status === TransactionStatus.Approved ? [{ event: Events.TransactionCaptured, amount }] : [],
    );
  }

  /** Asks the acquirer to authorize (and capture) the sale, and writes its outcome into `change`. */
  private async authorizeAt(route: Route, sale: SaleAttempt, change: Transition): Promise<void> {
    const { req, row, card, resumed } = sale;
    const amount = Number(row.amount);
    let result: AcquirerResult;
    try {
      result = await route.connector.authorize({
        transactionId: row.id,
        operationKey: `${row.id}-authorize`,
        acquirer: row.acquirer,
        account: route.account,
        resumed,
        pan: card.pan,
        expYear: card.expYear,
        expMonth: card.expMonth,
        holder: card.holder,
        brand: card.brand,
        securityCode: sale.securityCode,
        amount,
        currency: row.currency.trim(),
        instalments: row.instalments,
        capture: req.capture,
        softDescriptor: saleDetailsOf(row.details).softDescriptor,
        initiator: req.rebill?.merchantInitiated ? 'merchant' : 'customer',
      });
    } catch (e) {
      // Not reached (or its breaker is open): nothing was charged, and the sale says so at once.
      // An unknown outcome (AcquirerUnreachableError), or a resumed sale whose earlier try may have
      // reached the acquirer, is thrown on: the sale stays at status 0 (the caller gets a 503) and
      // the pending-sales reconciler settles it once the acquirer answers (found: reversed; 101).
      if (!(e instanceof AcquirerUnavailableError) || resumed) throw e;
      change.errorCode = ErrorCodes.AcquirerUnavailable;
      change.processor = { returnCode: '', returnMessage: e.message };
      return;
    }
    change.processor = processorOf(result);
    if (result.outcome === 'approved') {
      change.status = req.capture ? TransactionStatus.Approved : TransactionStatus.Authorized;
      change.capturedAmount = req.capture ? amount : 0;
    } else if (result.outcome === 'timeout') {
      // Outcome unknown at the acquirer: undo it, so the card is never left charged.
      await this.reverseOrThrow(route, row, result);
      change.errorCode = ErrorCodes.AcquirerTimeout;
    }
  }

  /** Voids an authorization whose outcome is unknown; a refused void leaves the sale undecided (thrown), never recorded as undone. */
  private async reverseOrThrow(route: Route, row: TransactionRow, found: AcquirerResult): Promise<void> {
    const reversed = await route.connector.reverse({
      operationKey: `${row.id}-reversal`,
      tid: found.tid,
      saleRef: found.saleRef,
      transactionId: row.id,
      account: route.account,
    });
    if (reversed.outcome !== 'approved') {
      throw new AcquirerUnreachableError(
        route.connector.name,
        `${route.connector.name}: the reversal was refused (${reversed.returnCode})`,
      );
    }
  }

  private async cardOf(req: AuthorizeRequest): Promise<{ card: ValidCard; securityCode?: string }> {
    if (req.sealedCard) {
      const card = await this.tokens.openValidated(req.sealedCard, req.flag);
      return { card, securityCode: card.securityCode };
    }
    const card = await this.tokens.loadCard(req.merchantId, req.tokenCard ?? '');
    const securityCode = req.sealedSecurityCode ? await openJson<string>(this.config.keys.transit, req.sealedSecurityCode) : undefined;
    return { card, securityCode };
  }
}

/** One sale's authorization attempt: its request, its row, its opened card. */
interface SaleAttempt {
  req: AuthorizeRequest;
  row: TransactionRow;
  card: ValidCard;
  securityCode?: string;
  resumed: boolean;
}
