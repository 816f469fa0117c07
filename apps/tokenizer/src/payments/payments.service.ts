import { Inject, Injectable } from '@nestjs/common';
import {
  AuthorizeRequest,
  CancelRequest,
  CaptureRequest,
  DomainError,
  ErrorCodes,
  Events,
  TransactionStatus,
  TransactionView,
} from '@app/contracts';
import { isExpired, maskPan, ValidCard } from '@app/card';
import { OutboxEvent, OutboxRelay, toTransactionView, TransactionRow, TransactionsRepository, Transition } from '@app/persistence';
import { openJson } from '@app/vault';
import { ACQUIRER_CONNECTOR, AcquirerConnector, AcquirerResult } from '../acquirer/acquirer.connector';
import { TokenizerConfig } from '../config/tokenizer.config';
import { TokensService } from '../tokens/tokens.service';

const S = TransactionStatus;

/**
 * Authorize, capture and cancel with the acquirer. Every handler is safe to run twice for the
 * same message (a redelivery after a crash, a retry after a reply timeout): the acquirer call
 * carries an operation key derived from the transaction and its status version, so the acquirer
 * treats a repeat as the same operation, and the status only moves by compare-and-set.
 */
@Injectable()
export class PaymentsService {
  constructor(
    private readonly transactions: TransactionsRepository,
    private readonly tokens: TokensService,
    private readonly relay: OutboxRelay,
    private readonly config: TokenizerConfig,
    @Inject(ACQUIRER_CONNECTOR) private readonly acquirer: AcquirerConnector,
  ) {}

  /**
   * `firstDelivery`: the message was never handed out before, so the sale it carries, as the API
   * recorded it, is still undecided (only this job decides a sale, and the reconciler leaves alone
   * a sale whose job exists): no need to read it back. Were it decided after all, the acquirer
   * call repeats the same operation key (answered from its first record) and the compare-and-set
   * fails, so the recorded outcome is the answer.
   */
  async authorize(req: AuthorizeRequest, firstDelivery = false): Promise<TransactionView> {
    const row = (firstDelivery && recordedRow(req)) || (await this.load(req.merchantId, req.transactionId));
    // Already decided (this is a redelivery): the answer is the recorded outcome.
    if (row.status !== S.Waiting) return toTransactionView(row);

    const { card, securityCode } = await this.cardOf(req);
    let tokenCard: string | undefined;
    if (req.saveCard && req.sealedCard) tokenCard = (await this.tokens.store(req.merchantId, card, req.billing ?? null)).token;
    const amount = Number(row.amount);
    const change: Transition = { status: S.Unauthorized, tokenCard, maskedCard: maskPan(card.pan), brand: card.brand };

    if (isExpired({ year: card.expYear, month: card.expMonth })) {
      change.errorCode = ErrorCodes.CardExpired;
      change.processor = { returnCode: '54', returnMessage: 'Expired card' };
    } else {
      const result = await this.acquirer.authorize({
        operationKey: `${row.id}-authorize`,
        acquirer: row.acquirer,
        pan: card.pan,
        expYear: card.expYear,
        expMonth: card.expMonth,
        holder: card.holder,
        securityCode,
        amount,
        currency: row.currency.trim(),
        instalments: row.instalments,
        capture: req.capture,
        softDescriptor: (row.details as { softDescriptor?: string }).softDescriptor,
      });
      change.processor = processorOf(result);
      if (result.outcome === 'approved') {
        change.status = req.capture ? S.Approved : S.Authorized;
        change.capturedAmount = req.capture ? amount : 0;
      } else if (result.outcome === 'timeout') {
        // Outcome unknown at the acquirer: undo it, so the card is never left charged.
        await this.acquirer.reverse({ operationKey: `${row.id}-reversal`, tid: result.tid });
        change.errorCode = ErrorCodes.AcquirerTimeout;
      }
    }
    return this.apply(row, change, req.capture && change.status === S.Approved ? [{ event: Events.TransactionCaptured, amount }] : []);
  }

  /**
   * A sale left at status 0 with no authorization job (the API stopped between recording it and
   * queueing it, or the decision could not be recorded): the card is gone, so it is declined with
   * `101`, and whatever the acquirer knows of its authorization is reversed first, so the card is
   * never left charged with an unknown outcome.
   */
  async abandon(row: TransactionRow): Promise<TransactionView> {
    const known = await this.acquirer.inquire(`${row.id}-authorize`);
    const change: Transition = { status: S.Unauthorized, errorCode: ErrorCodes.NotProcessed };
    if (known) {
      change.processor = processorOf(known);
      if (known.outcome !== 'declined') await this.acquirer.reverse({ operationKey: `${row.id}-reversal`, tid: known.tid });
    }
    return this.apply(row, change, []);
  }

  async capture(req: CaptureRequest): Promise<TransactionView> {
    const row = await this.load(req.merchantId, req.transactionId);
    this.assertCapturable(row);
    const amount = req.amount ?? Number(row.amount);
    if (amount > Number(row.amount)) {
      throw DomainError.validation(ErrorCodes.InvalidField, 'amount', `amount must not exceed the authorized ${row.amount} cents.`);
    }
    const result = await this.acquirer.capture({ operationKey: `${row.id}-capture-v${row.status_version}`, tid: row.processor.tid ?? '', amount });
    if (result.outcome !== 'approved') throw unavailable('The acquirer did not confirm the capture; retry later.');
    return this.apply(row, { status: S.Approved, capturedAmount: amount, processor: processorOf(result) }, [{ event: Events.TransactionCaptured, amount }], (r) =>
      this.assertCapturable(r),
    );
  }

  async cancel(req: CancelRequest): Promise<TransactionView> {
    const row = await this.load(req.merchantId, req.transactionId);
    this.assertCancellable(row);
    // An authorization is cancelled against what was authorized, a capture against what was captured.
    const base = row.status === S.Authorized || Number(row.captured_amount) === 0 ? Number(row.amount) : Number(row.captured_amount);
    // What a chargeback already returned to the cardholder cannot be refunded a second time.
    const chargedBack = base === Number(row.captured_amount) ? await this.transactions.chargedBackOf(row.id) : 0;
    const remaining = base - Number(row.cancelled_amount) - chargedBack;
    if (remaining <= 0) throw conflict(ErrorCodes.InvalidState, 'Nothing is left to cancel: what was not cancelled was charged back.');
    const amount = req.amount ?? remaining;
    if (amount > remaining) {
      throw DomainError.validation(ErrorCodes.InvalidField, 'amount', `amount must not exceed the ${remaining} cents that can still be cancelled.`);
    }
    const result = await this.acquirer.cancel({ operationKey: `${row.id}-cancel-v${row.status_version}`, tid: row.processor.tid ?? '', amount });
    if (result.outcome !== 'approved') throw unavailable('The acquirer did not confirm the cancellation; retry later.');
    const cancelled = Number(row.cancelled_amount) + amount;
    const status = cancelled === base ? S.Cancelled : S.PartialCancelled;
    return this.apply(row, { status, cancelledAmount: cancelled, processor: processorOf(result) }, [{ event: Events.TransactionCancelled, amount }], (r) =>
      this.assertCancellable(r),
    );
  }

  /**
   * Records the change and its events in one Postgres transaction. When another change won the
   * race, the transaction is re-read: a finished authorization is the answer; for capture and
   * cancel, `recheck` turns the new state into the conflict the caller sees.
   */
  private async apply(
    row: TransactionRow,
    change: Transition,
    extra: { event: string; amount: number }[],
    recheck?: (row: TransactionRow) => void,
  ): Promise<TransactionView> {
    const events = (updated: TransactionRow): OutboxEvent[] => {
      const view = toTransactionView(updated);
      // Cumulative amounts travel with every event: settlement applies them idempotently, whatever the order.
      const base = { transactionId: view.id, merchantId: updated.merchant_id, statusVersion: view.statusVersion, capturedAmount: view.capturedAmount, cancelledAmount: view.cancelledAmount };
      const settle = extra.map((e) => ({ event: e.event as OutboxEvent['event'], payload: { ...base, amount: e.amount } }));
      // status_changed asks the notifier for a webhook, so it exists only where a listener does:
      // a sale without urlReturn would cost a queue job the notifier can only drop.
      if (!updated.url_return) return settle;
      // The notifier renders the webhook from this snapshot: the row may have moved on by then.
      return [{ event: Events.TransactionStatusChanged, payload: { ...base, status: view.status, urlReturn: updated.url_return, view } }, ...settle];
    };
    let recorded = 0;
    const updated = await this.transactions.transition(row, change, (next) => {
      const out = events(next);
      recorded = out.length;
      return out;
    });
    if (updated) {
      // A change with nothing to publish (a silent decline) needs no relay pass.
      if (recorded) this.relay.poke();
      return toTransactionView(updated);
    }
    const current = await this.load(row.merchant_id, row.id);
    recheck?.(current);
    return toTransactionView(current);
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

  private async load(merchantId: string, id: string): Promise<TransactionRow> {
    const row = await this.transactions.findByMerchantAndId(merchantId, id.toLowerCase());
    if (!row) throw new DomainError('not_found', ErrorCodes.TransactionNotFound, 'Transaction not found.', 'transactionId');
    return row;
  }

  private assertCapturable(row: TransactionRow): void {
    if (row.status === S.Authorized) return;
    if (row.status === S.Approved || (row.status === S.PartialCancelled && Number(row.captured_amount) > 0)) throw conflict(ErrorCodes.AlreadyCaptured, 'The transaction is already captured.');
    if (row.status === S.Cancelled || row.status === S.PartialCancelled) throw conflict(ErrorCodes.AlreadyCancelled, 'The transaction is cancelled.');
    throw conflict(ErrorCodes.InvalidState, 'Only an authorized transaction can be captured.');
  }

  private assertCancellable(row: TransactionRow): void {
    if (row.status === S.Authorized || row.status === S.Approved || row.status === S.PartialCancelled) return;
    if (row.status === S.Cancelled) throw conflict(ErrorCodes.AlreadyCancelled, 'The transaction is already cancelled.');
    throw conflict(ErrorCodes.InvalidState, 'Only an authorized or approved transaction can be cancelled.');
  }
}

/** The row the API recorded with the request, if it is this sale's, undecided. */
function recordedRow(req: AuthorizeRequest): TransactionRow | undefined {
  const row = req.recorded as TransactionRow | undefined;
  const fits = row?.id === req.transactionId.toLowerCase() && row.merchant_id === req.merchantId.toLowerCase() && row.status === S.Waiting && row.status_version === 1;
  return fits ? row : undefined;
}

function processorOf(r: AcquirerResult): Transition['processor'] {
  return { tid: r.tid, nsu: r.nsu, authorizationCode: r.authorizationCode ?? '', returnCode: r.returnCode, returnMessage: r.returnMessage };
}

function conflict(code: DomainError['code'], message: string): DomainError {
  return new DomainError('conflict', code, message, 'transactionId');
}

function unavailable(message: string): DomainError {
  return new DomainError('unavailable', ErrorCodes.ServiceUnavailable, message);
}
