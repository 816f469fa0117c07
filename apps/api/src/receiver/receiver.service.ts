import { Inject, Injectable } from '@nestjs/common';
import { randomUUID } from 'node:crypto';
import { lastValueFrom, timeout, TimeoutError } from 'rxjs';
import {
  AuthorizeRequest,
  CaptureRequest,
  DomainError,
  ErrorCodes,
  maskedNumberOf,
  Patterns,
  SaleInput,
  TransactionView,
  uuidFromParts,
} from '@app/contracts';
import { detectBrand, maskPan } from '@app/card';
import { LedgerRepository, saleDetailsOf, saleSnapshotOf, TransactionsRepository } from '@app/persistence';
import { RemoteError, ReplyTimeoutError, TransportUnavailableError, TypedClient, withJobId } from '@app/messaging';
import { sealJson } from '@app/vault/transit';
import { traceAttributes } from '@app/platform/tracing';
import { ApiConfig } from '../config/api.config';
import { GATEWAY_CLIENT } from '../messaging/gateway-client.provider';
import { SaleTermsService } from '../split/sale-terms.service';
import { transactionViewOf } from '@app/split';
import { TokensService } from '../tokens/tokens.service';
import { RebillService } from './rebill.service';
import { AcquirerRoutingService } from './acquirer-routing.service';

export type OperationInput = Omit<CaptureRequest, 'merchantId' | 'operationId' | 'notAfter'>;

/** Time left for the tokenizer's reply to travel back before the API stops waiting for it. */
const REPLY_MARGIN_MS = 500;

export interface Outcome {
  httpStatus: 200 | 202;
  view: TransactionView;
}

/**
 * The card-sale use cases. A sale is recorded (status 0) before anything is sent, then decided by
 * the tokenizer; the API waits for the outcome up to SALE_SYNC_WAIT_MS and otherwise answers 202
 * with status 0 (the outcome is still recorded, and reported through report and urlReturn).
 */
@Injectable()
export class ReceiverService {
  constructor(
    @Inject(GATEWAY_CLIENT) private readonly client: TypedClient,
    private readonly transactions: TransactionsRepository,
    private readonly config: ApiConfig,
    private readonly tokens: TokensService,
    private readonly terms: SaleTermsService,
    private readonly ledger: LedgerRepository,
    private readonly rebills: RebillService,
    private readonly routing: AcquirerRoutingService,
  ) {}

  async sale(merchantId: string, input: SaleInput, operation: 'sale' | 'authorize', respondAsync: boolean): Promise<Outcome> {
    // A production merchant's sale needs a connector and its account there: refused before anything is recorded.
    await this.routing.check(merchantId, input.payment.acquirer);
    const id = newTransactionId(operation);
    const card = input.payment.card;
    // The fee plan is keyed by brand: with a token, its facts (token_facts, read here) name it (an unknown
    // token is a 404 here, before anything is recorded).
    const known = card
      ? { brand: detectBrand(card.cardNumber) ?? '', masked: maskPan(card.cardNumber) }
      : await this.tokens.retrieve(merchantId, input.payment.tokenCard!).then((t) => ({ brand: t.brand, masked: maskedNumberOf(t) }));
    const terms = await this.terms.termsFor(merchantId, input, known.brand);
    const pending = await this.transactions.insertPending({
      id,
      merchantId,
      reference: input.order.reference,
      operation,
      acquirer: input.payment.acquirer,
      method: input.payment.method,
      instalments: input.payment.numberOfPayments,
      currency: input.payment.currency,
      amount: input.payment.amount,
      maskedCard: known.masked,
      brand: known.brand,
      tokenCard: input.payment.tokenCard,
      details: {
        softDescriptor: input.payment.softDescriptor,
        groupNumber: input.payment.groupNumber,
        departureTax: input.payment.departureTax,
        billing: input.billing,
        fraud: input.fraud,
        terms,
      },
      urlReturn: input.urlReturn,
    });
    const recorded = saleSnapshotOf(pending);
    const request: AuthorizeRequest = {
      transactionId: id,
      merchantId,
      sealedCard: card ? await sealJson(this.config.transitKeys, card) : undefined,
      tokenCard: input.payment.tokenCard,
      sealedSecurityCode:
        !card && input.payment.cardSecurityCode ? await sealJson(this.config.transitKeys, input.payment.cardSecurityCode) : undefined,
      flag: input.payment.flag,
      capture: operation === 'sale',
      saveCard: input.payment.saveCreditCard || input.payment.generateToken,
      billing: input.billing,
      recorded,
    };
    // The job id is the transaction id: whatever retries, one authorization job per sale.
    const reply$ = this.client.send(Patterns.CardAuthorize, withJobId(request, id));
    if (respondAsync) {
      reply$.subscribe({ error: () => undefined });
      return { httpStatus: 202, view: transactionViewOf(recorded) };
    }
    try {
      return { httpStatus: 200, view: await lastValueFrom(reply$.pipe(timeout({ first: this.config.saleSyncWaitMs }))) };
    } catch (e) {
      // Either wait running out leaves the sale recorded and still to be decided: the outcome is
      // not known yet, which is a 202, never a 503 (a merchant would retry a sale that goes on).
      if (e instanceof TimeoutError || e instanceof ReplyTimeoutError) return { httpStatus: 202, view: transactionViewOf(recorded) };
      // Nothing was charged: a sale that could not be queued, or that the vault refused (unknown
      // token), must not stay behind as a pending transaction.
      if (e instanceof TransportUnavailableError || (e instanceof RemoteError && e.payload.kind !== 'unavailable')) {
        await this.transactions.deletePending(merchantId, id);
      }
      throw e;
    }
  }

  async capture(merchantId: string, req: OperationInput, idempotencyKey?: string): Promise<TransactionView> {
    if (req.amount !== undefined) {
      const row = await this.transactions.findByMerchantAndId(merchantId, req.transactionId.toLowerCase());
      if (row) this.terms.checkCapture(merchantId, saleDetailsOf(row.details).terms, req.amount);
    }
    return lastValueFrom(this.client.send(Patterns.CardCapture, this.operation('capture', merchantId, req, idempotencyKey)));
  }

  async cancel(merchantId: string, req: OperationInput, idempotencyKey?: string): Promise<TransactionView> {
    // A rebill's id: its future cycles are stopped (its charges are transactions, cancelled as sales).
    const rebill = await this.rebills.cancel(merchantId, req.transactionId, req.amount);
    if (rebill) return rebill;
    return lastValueFrom(this.client.send(Patterns.CardCancel, this.operation('cancel', merchantId, req, idempotencyKey)));
  }

  /**
   * A capture or cancel as the tokenizer takes it. A retry with the same Idempotency-Key and the
   * same request (operation, transaction, amount) is the same operation (the same id), so one that
   * was applied after its first answer was lost is never applied again, even past the key's 24 h
   * replay window. The tokenizer does not start it after the reply wait ends (the answer then is a
   * 503 "retry"), so no change happens that nobody was told of.
   */
  private operation(kind: 'capture' | 'cancel', merchantId: string, req: OperationInput, idempotencyKey?: string): CaptureRequest {
    const request = [kind, merchantId, req.transactionId.toLowerCase(), req.amount ?? 'full', idempotencyKey].join('\0');
    const operationId = idempotencyKey === undefined ? randomUUID() : uuidFromParts(request);
    traceAttributes({ 'gateway.transaction_id': req.transactionId.toUpperCase(), 'gateway.operation': kind });
    return { ...req, merchantId, operationId, notAfter: Date.now() + this.config.replyTimeoutMs - REPLY_MARGIN_MS };
  }

  async report(merchantId: string, by: { transactionId: string } | { reference: string }): Promise<TransactionView> {
    const row =
      'transactionId' in by
        ? await this.transactions.findByMerchantAndId(merchantId, by.transactionId.toLowerCase())
        : await this.transactions.findLatestByMerchantAndReference(merchantId, by.reference);
    if (!row && 'transactionId' in by) {
      const rebill = await this.rebills.report(merchantId, by.transactionId);
      if (rebill) return rebill;
    }
    if (!row)
      throw new DomainError(
        'not_found',
        ErrorCodes.TransactionNotFound,
        'Transaction not found.',
        'transactionId' in by ? 'transactionId' : 'reference',
      );
    const view = transactionViewOf(saleSnapshotOf(row));
    if (view.capturedAmount > 0) view.payables = await this.ledger.payablesOf(merchantId, row.id);
    return view;
  }
}

/** A new sale's id, named on the request's span. */
function newTransactionId(operation: 'sale' | 'authorize'): string {
  const id = randomUUID();
  traceAttributes({ 'gateway.transaction_id': id.toUpperCase(), 'gateway.operation': operation });
  return id;
}
