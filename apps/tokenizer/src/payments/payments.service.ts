import { Inject, Injectable, Logger } from '@nestjs/common';
import { safeErrorText } from '@app/platform';
import AsyncLock from 'async-lock';
import { randomUUID } from 'node:crypto';
import {
  AuthorizeRequest,
  CancelRequest,
  CaptureRequest,
  DomainError,
  ErrorCodes,
  Events,
  TransactionEvent,
  TransactionStatus,
  TransactionView,
} from '@app/contracts';
import { isExpired, maskPan, ValidCard } from '@app/card';
import {
  OperationClaim,
  OperationKind,
  OperationRow,
  OperationsRepository,
  OutboxEvent,
  OutboxRelay,
  RebillsRepository,
  TransactionRow,
  TransactionsRepository,
  Transition,
} from '@app/persistence';
import { openJson } from '@app/vault/transit';
import { ACQUIRER_CONNECTOR, AcquirerConnector, AcquirerResult } from '@app/acquirer';
import { conflict, judge, Judged, judgeHeld } from './operation-rules';
import { transactionViewOf } from '@app/split';
import { TokenizerConfig } from '../config/tokenizer.config';
import { TokensService } from '../tokens/tokens.service';

/**
 * Authorize, capture and cancel with the acquirer. Every handler is safe to run twice for the
 * same message (a redelivery after a crash, a retry after a reply timeout): the acquirer call
 * carries an operation key (the sale's id; a capture's or cancel's claim), so the acquirer treats
 * a repeat as the same operation, and nothing reaches the acquirer that the gateway will not
 * record: a sale is decided by compare-and-set, a capture or cancel holds a claim on the
 * transaction from before the acquirer call until its outcome is recorded.
 */
@Injectable()
export class PaymentsService {
  /** Operations on one transaction take turns in this process; the claim orders them across processes. */
  private readonly turns: AsyncLock;
  private readonly logger = new Logger(PaymentsService.name);

  constructor(
    private readonly transactions: TransactionsRepository,
    private readonly operations: OperationsRepository,
    private readonly tokens: TokensService,
    private readonly relay: OutboxRelay,
    private readonly rebills: RebillsRepository,
    private readonly config: TokenizerConfig,
    @Inject(ACQUIRER_CONNECTOR) private readonly acquirer: AcquirerConnector,
  ) {
    this.turns = new AsyncLock({
      maxPending: config.operationQueuePerTransaction,
      // A turn that hangs (a statement stuck) gives the transaction back to the others: the claim
      // in Postgres still keeps them from acting on it until it is settled.
      maxExecutionTime: config.operationWaitMs + 4 * config.acquirerTimeoutMs,
    });
  }

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
    if (row.status !== TransactionStatus.Waiting) return this.followUp(req, transactionViewOf(row));
    // A rebill cancelled before this charge went to the acquirer (its job was queued, or sent again
    // after being lost): the cancel stops it. Not charged; whatever an earlier try of the same
    // charge left at the acquirer is undone, as for any sale abandoned undecided. A cancel that
    // comes after this point finds the charge in flight, and it is decided.
    if (req.rebill && (await this.rebills.stateOf(req.rebill.id)) === 'cancelled') return this.followUp(req, await this.abandon(row));
    return this.followUp(req, await this.decideSale(req, row));
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

  private async decideSale(req: AuthorizeRequest, row: TransactionRow): Promise<TransactionView> {
    const { card, securityCode } = await this.cardOf(req);
    let tokenCard: string | undefined;
    if (req.saveCard && req.sealedCard) tokenCard = (await this.tokens.store(req.merchantId, card, req.billing ?? null)).token;
    const amount = Number(row.amount);
    const change: Transition = { status: TransactionStatus.Unauthorized, tokenCard, maskedCard: maskPan(card.pan), brand: card.brand };

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
        initiator: req.rebill?.merchantInitiated ? 'merchant' : 'customer',
      });
      change.processor = processorOf(result);
      if (result.outcome === 'approved') {
        change.status = req.capture ? TransactionStatus.Approved : TransactionStatus.Authorized;
        change.capturedAmount = req.capture ? amount : 0;
      } else if (result.outcome === 'timeout') {
        // Outcome unknown at the acquirer: undo it, so the card is never left charged.
        await this.acquirer.reverse({ operationKey: `${row.id}-reversal`, tid: result.tid });
        change.errorCode = ErrorCodes.AcquirerTimeout;
      }
    }
    return this.apply(
      row,
      change,
      req.capture && change.status === TransactionStatus.Approved ? [{ event: Events.TransactionCaptured, amount }] : [],
    );
  }

  /**
   * A sale left at status 0 with no authorization job (the API stopped between recording it and
   * queueing it, or the decision could not be recorded): the card is gone, so it is declined with
   * `101`, and whatever the acquirer knows of its authorization is reversed first, so the card is
   * never left charged with an unknown outcome.
   */
  async abandon(row: TransactionRow): Promise<TransactionView> {
    const known = await this.acquirer.inquire(`${row.id}-authorize`);
    const change: Transition = { status: TransactionStatus.Unauthorized, errorCode: ErrorCodes.NotProcessed };
    if (known) {
      change.processor = processorOf(known);
      if (known.outcome !== 'declined') await this.acquirer.reverse({ operationKey: `${row.id}-reversal`, tid: known.tid });
    }
    return this.apply(row, change, []);
  }

  capture(req: CaptureRequest): Promise<TransactionView> {
    return this.operate('capture', req);
  }

  cancel(req: CancelRequest): Promise<TransactionView> {
    return this.operate('cancel', req);
  }

  /**
   * A capture or cancel, one at a time per transaction. It waits its turn (in this process, then
   * for a claim another process holds) until OPERATION_WAIT_MS or the caller's deadline, is judged
   * against the state the operation before it left, claims the transaction, and only then talks
   * to the acquirer. A request seen before (a redelivered job, a retry with the same
   * Idempotency-Key) is answered from its recorded outcome, or completed if it is still open.
   */
  private operate(kind: OperationKind, given: CaptureRequest): Promise<TransactionView> {
    // A job queued by an API that predates operation ids is a request of its own.
    const req = { ...given, operationId: given.operationId ?? randomUUID() };
    // Started no later than the acquirer call can still finish before the API stops waiting.
    const deadline = Math.min(Date.now() + this.config.operationWaitMs, (req.notAfter ?? Infinity) - this.config.acquirerTimeoutMs);
    const wait = deadline - Date.now();
    if (wait <= 0) return Promise.reject(lateStart());
    return this.turns
      .acquire(req.transactionId.toLowerCase(), () => this.operateInTurn(kind, req, deadline), { timeout: wait })
      .catch((e: Error) => {
        if (e instanceof DomainError) throw e;
        if (e.message.startsWith('async-lock timed out') || e.message.startsWith('Too many pending tasks')) throw busy();
        if (e.message.startsWith('Maximum execution time'))
          throw unavailable('The operation did not finish in time; retry with the same Idempotency-Key.');
        throw e;
      });
  }

  private async operateInTurn(kind: OperationKind, req: CaptureRequest, deadline: number): Promise<TransactionView> {
    for (let pause = 10; ; pause = Math.min(pause * 2, 200)) {
      const known = await this.operations.findByRequest(req.operationId);
      if (known) {
        // The same id for another request can only be a collision or a forged job: never its answer.
        if (
          known.kind !== kind ||
          known.transaction_id !== req.transactionId.toLowerCase() ||
          (req.amount !== undefined && Number(known.amount) !== req.amount)
        ) {
          throw new DomainError(
            'conflict',
            ErrorCodes.IdempotencyConflict,
            'This Idempotency-Key was already used for another operation.',
            'Idempotency-Key',
          );
        }
        return this.answerKnown(known);
      }
      const row = await this.transactions.findByMerchantAndId(req.merchantId, req.transactionId.toLowerCase());
      if (!row) throw notFound();
      if (Date.now() >= deadline) throw row.pending_operation_id ? busy() : lateStart();
      if (row.pending_operation_id) {
        // Held by an operation of another process (or of a dead one, until the reconciler settles it).
        await sleep(Math.min(pause, deadline - Date.now()));
        continue;
      }
      const judged = judge(kind, row, req.amount);
      const id = randomUUID();
      const claim = { id, requestId: req.operationId, kind, amount: judged.amount, operationKey: `${kind}-${id}` };
      try {
        if (await this.operations.claim(row, claim)) return await this.execute(row, claim, judged);
      } catch (e) {
        // The same request claimed in another process at the same moment: its outcome is the answer.
        if ((e as { code?: string }).code !== '23505') throw e;
      }
      // The transaction changed since it was read: judge again against what it is now.
    }
  }

  /** Holds the claim: asks the acquirer, then records its answer and releases the claim. */
  private async execute(row: TransactionRow, claim: OperationClaim, judged: Judged): Promise<TransactionView> {
    const command = { operationKey: claim.operationKey, tid: row.processor.tid ?? '', amount: claim.amount };
    let result: AcquirerResult;
    try {
      result = await withTimeout(this.acquirer[claim.kind](command), this.config.acquirerTimeoutMs);
      if (result.outcome === 'timeout') result = await this.acquirer.fence(claim.operationKey, claim.kind);
    } catch {
      // The answer is lost: settle it now, or leave the claim to the reconciler (it asks again).
      result = await this.acquirer.fence(claim.operationKey, claim.kind).catch(() => {
        throw unavailable(
          'The acquirer did not answer; the gateway records its outcome as soon as it does. Retry with the same Idempotency-Key.',
        );
      });
    }
    return this.decide(row, claim.id, judged, result);
  }

  /**
   * Records what the acquirer answered for the operation holding `row` (also the reconciler's
   * path). When the operation is no longer pending, someone else decided it: that is the answer.
   */
  async decide(row: TransactionRow, operationId: string, judged: Judged, result: AcquirerResult): Promise<TransactionView> {
    if (result.outcome === 'approved') {
      const change = { ...judged.change, processor: { returnCode: result.returnCode, returnMessage: result.returnMessage } };
      const updated = await this.operations.recordApplied(row, operationId, change, result, (next) =>
        this.eventsOf(next, [{ event: judged.event, amount: judged.amount }]),
      );
      if (updated) {
        this.relay.poke();
        return transactionViewOf(updated);
      }
    } else {
      await this.operations.recordNotApplied(row.id, operationId, result.voided ? 'voided' : 'refused', result);
    }
    const decided = await this.operations.find(operationId);
    if (!decided || decided.state === 'pending')
      throw unavailable('The operation could not be recorded; retry with the same Idempotency-Key.');
    return this.answerKnown(decided);
  }

  /**
   * A claim its holder left behind (it died between claim and outcome, or lost the acquirer's
   * answer): whatever the acquirer did under its key is recorded; if it never heard of it, the key
   * is closed (fenced) and the claim released. Either way the transaction is free again.
   */
  async resolveStale(op: OperationRow): Promise<TransactionView | undefined> {
    const row = await this.transactions.findByMerchantAndId(op.merchant_id, op.transaction_id);
    if (!row || row.pending_operation_id !== op.id) return undefined;
    const result = (await this.acquirer.inquire(op.operation_key)) ?? (await this.acquirer.fence(op.operation_key, op.kind));
    return this.decide(row, op.id, judgeHeld(op, row), result).catch((e) => {
      // A refusal is the operation's recorded outcome, not a failure of this pass.
      if (e instanceof DomainError && e.kind !== 'unavailable') return undefined;
      throw e;
    });
  }

  /** A request seen before: its recorded outcome, or (still open) the operation completed now. */
  private async answerKnown(op: OperationRow): Promise<TransactionView> {
    const row = await this.transactions.findByMerchantAndId(op.merchant_id, op.transaction_id);
    if (!row) throw notFound();
    if (op.state === 'pending') {
      if (row.pending_operation_id !== op.id)
        throw unavailable('The operation could not be recorded; retry with the same Idempotency-Key.');
      // Its holder died or lost its answer: this repeat completes it with the same operation key.
      return this.execute(
        row,
        { id: op.id, requestId: op.request_id, kind: op.kind, amount: Number(op.amount), operationKey: op.operation_key },
        judgeHeld(op, row),
      );
    }
    if (op.state === 'applied') return transactionViewOf(row);
    const result = op.result as unknown as AcquirerResult;
    if (op.state === 'voided') throw unavailable('The acquirer never received the operation and nothing was done; retry it.');
    throw conflict(ErrorCodes.InvalidState, `The acquirer refused the ${op.kind}: ${result.returnMessage} (${result.returnCode}).`);
  }

  /**
   * The settle and notify events of a change. Cumulative amounts travel with every event:
   * settlement applies them idempotently, whatever the order.
   */
  private eventsOf(updated: TransactionRow, extra: { event: string; amount: number }[]): OutboxEvent[] {
    const view = transactionViewOf(updated);
    const base = {
      transactionId: view.id,
      merchantId: updated.merchant_id,
      statusVersion: view.statusVersion,
      capturedAmount: view.capturedAmount,
      cancelledAmount: view.cancelledAmount,
    };
    const settle = extra.map((e) => ({
      event: e.event as OutboxEvent['event'],
      payload: { ...base, amount: e.amount } satisfies TransactionEvent,
    }));
    // status_changed asks the notifier for a webhook, so it exists only where a listener does:
    // a sale without urlReturn would cost a queue job the notifier can only drop.
    if (!updated.url_return) return settle;
    // The notifier renders the webhook from this snapshot: the row may have moved on by then.
    return [
      {
        event: Events.TransactionStatusChanged,
        payload: { ...base, status: view.status, urlReturn: updated.url_return, view } satisfies TransactionEvent,
      },
      ...settle,
    ];
  }

  /**
   * Records a sale's decision and its events in one statement. When another change won the race
   * (a redelivered job), the recorded outcome is the answer.
   */
  private async apply(row: TransactionRow, change: Transition, extra: { event: string; amount: number }[]): Promise<TransactionView> {
    let recorded = 0;
    const updated = await this.transactions.transition(row, change, (next) => {
      const out = this.eventsOf(next, extra);
      recorded = out.length;
      return out;
    });
    if (updated) {
      // A change with nothing to publish (a silent decline) needs no relay pass.
      if (recorded) this.relay.poke();
      return transactionViewOf(updated);
    }
    return transactionViewOf(await this.load(row.merchant_id, row.id));
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
    if (!row) throw notFound();
    return row;
  }
}

/** The row the API recorded with the request, if it is this sale's, undecided. */
function recordedRow(req: AuthorizeRequest): TransactionRow | undefined {
  const row: TransactionRow | undefined = req.recorded && { ...req.recorded, created_at: new Date(req.recorded.created_at) };
  const fits =
    row?.id === req.transactionId.toLowerCase() &&
    row.merchant_id === req.merchantId.toLowerCase() &&
    row.status === TransactionStatus.Waiting &&
    row.status_version === 1;
  return fits ? row : undefined;
}

function processorOf(r: AcquirerResult): Transition['processor'] {
  return { tid: r.tid, nsu: r.nsu, authorizationCode: r.authorizationCode ?? '', returnCode: r.returnCode, returnMessage: r.returnMessage };
}

function notFound(): DomainError {
  return new DomainError('not_found', ErrorCodes.TransactionNotFound, 'Transaction not found.', 'transactionId');
}

function busy(): DomainError {
  return conflict(
    ErrorCodes.OperationInProgress,
    'Another capture or cancel of this transaction is still in progress; nothing was done. Retry, with the same Idempotency-Key.',
  );
}

function lateStart(): DomainError {
  return conflict(
    ErrorCodes.OperationInProgress,
    'The gateway could not start the operation in time; nothing was done. Retry, with the same Idempotency-Key.',
  );
}

/** The acquirer's answer, or a rejection once `ms` have passed (the answer counts as lost: the key is then fenced). */
function withTimeout<T>(work: Promise<T>, ms: number): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<never>((_, reject) => (timer = setTimeout(() => reject(new Error(`no answer within ${ms} ms`)), ms)));
  return Promise.race([work, late]).finally(() => clearTimeout(timer));
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, Math.max(0, ms)));

function unavailable(message: string): DomainError {
  return new DomainError('unavailable', ErrorCodes.ServiceUnavailable, message);
}
