import { Injectable } from '@nestjs/common';
import AsyncLock from 'async-lock';
import { randomUUID } from 'node:crypto';
import { CancelRequest, CaptureRequest, DomainError, ErrorCodes, TransactionView } from '@app/contracts';
import {
  OperationClaim,
  OperationKind,
  OperationRow,
  OperationsRepository,
  TransactionRow,
  TransactionsRepository,
} from '@app/persistence';
import { AcquirerResult, AcquirerUnavailableError, notReceived } from '@app/acquirer';
import { TokenizerConfig } from '../config/tokenizer.config';
import { conflict, judge, Judged, judgeHeld } from './operation-rules';
import {
  busy,
  eventsOf,
  lateStart,
  LOST_ANSWER,
  notFound,
  operationRef,
  sleep,
  unavailable,
  viewOfRow,
  withTimeout,
} from './payment-answers';
import { TransactionChanges } from './transaction-changes';
import { inSpan } from '@app/platform/tracing';

/**
 * Captures and cancels with the acquirer. Every handler is safe to run twice for the same message
 * (a redelivery after a crash, a retry after a reply timeout): a capture or cancel holds a claim on
 * the transaction from before the acquirer call until its outcome is recorded, and carries the
 * claim's operation key, so nothing reaches the acquirer that the gateway will not record.
 */
@Injectable()
export class MoneyOperationsService {
  /** Operations on one transaction take turns in this process; the claim orders them across processes. */
  private readonly turns: AsyncLock;

  constructor(
    private readonly transactions: TransactionsRepository,
    private readonly operations: OperationsRepository,
    private readonly changes: TransactionChanges,
    private readonly config: TokenizerConfig,
  ) {
    this.turns = new AsyncLock({
      maxPending: config.operationQueuePerTransaction,
      // A turn that hangs (a statement stuck) gives the transaction back to the others: the claim
      // in Postgres still keeps them from acting on it until it is settled.
      maxExecutionTime: config.operationWaitMs + 4 * config.acquirerTimeoutMs,
    });
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
    if (wait <= 0) return this.unstarted(kind, req, lateStart());
    return this.turns
      .acquire(req.transactionId.toLowerCase(), () => this.operateInTurn(kind, req, deadline), { timeout: wait })
      .catch((e: Error) => {
        if (e instanceof DomainError) throw e;
        if (e.message.startsWith('async-lock timed out') || e.message.startsWith('Too many pending tasks'))
          return this.unstarted(kind, req, busy());
        if (e.message.startsWith('Maximum execution time'))
          throw unavailable('The operation did not finish in time; retry with the same Idempotency-Key.');
        throw e;
      });
  }

  private async operateInTurn(kind: OperationKind, req: CaptureRequest, deadline: number): Promise<TransactionView> {
    for (let pause = 10; ; pause = Math.min(pause * 2, 200)) {
      const known = await this.operations.findByRequest(req.operationId);
      if (known) return this.answerKnown(sameRequest(known, kind, req));
      const row = await this.transactions.findByMerchantAndId(req.merchantId, req.transactionId.toLowerCase());
      if (!row) throw notFound();
      if (Date.now() >= deadline) return this.unstarted(kind, req, row.pending_operation_id ? busy() : lateStart());
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

  /**
   * A request that cannot start in time. "Nothing was done" is the answer only if no earlier
   * delivery of it claimed the transaction: a job retried after its worker died holding the claim
   * finds that claim here (and may be the very claim the others wait for). Its outcome is then the
   * answer, or, still open, a 503: the reconciler settles it with the acquirer, and a delivery this
   * late never calls the acquirer itself.
   */
  private async unstarted(kind: OperationKind, req: CaptureRequest, refusal: DomainError): Promise<TransactionView> {
    // Unread, the refusal could be untrue: whether it was done is then unknown (503), never "nothing was done".
    const known = await this.operations.findByRequest(req.operationId).catch(() => {
      throw unavailable('The gateway could not tell whether the operation started; retry with the same Idempotency-Key.');
    });
    if (!known) throw refusal;
    if (sameRequest(known, kind, req).state === 'pending') throw unavailable(LOST_ANSWER);
    return this.answerKnown(known);
  }

  /** Holds the claim: asks the acquirer, then records its answer and releases the claim. */
  private async execute(row: TransactionRow, claim: OperationClaim, judged: Judged): Promise<TransactionView> {
    const route = await this.changes.routeOf(row);
    if (typeof route === 'string') {
      return this.decide(row, claim.id, judged, notReceived(row.processor.tid, route));
    }
    const ref = operationRef(row, claim.kind, claim.operationKey, claim.amount, route);
    const command = {
      operationKey: claim.operationKey,
      tid: ref.tid ?? '',
      saleRef: ref.saleRef,
      transactionId: row.id,
      account: route.account,
      amount: claim.amount,
    };
    const work = route.connector[claim.kind](command);
    let result: AcquirerResult | undefined;
    try {
      result = await withTimeout(work, this.config.acquirerTimeoutMs);
    } catch (e) {
      // Never reached the acquirer (or its breaker is open): nothing was done, and the claim is released now.
      if (e instanceof AcquirerUnavailableError) result = notReceived(ref.tid, e.message);
      // Past the wait, a real acquirer's call may still be on its way: it ends first (its own
      // timeouts bound it), so what is read from the acquirer next cannot be overtaken by it. (The
      // sandbox closes the key instead: a late call then acts on nothing.)
      else if (route.connector.name !== 'sandbox') result = await work.catch(() => undefined);
    }
    if (!result || result.outcome === 'timeout') {
      // The answer is lost: settle it now, or leave the claim to the reconciler (it asks again).
      result = await route.connector.settle(ref).catch(() => {
        throw unavailable(LOST_ANSWER);
      });
      // A real acquirer cannot close a key: "not there yet" right after a lost answer is no proof.
      // The claim stays; the reconciler settles it once CLAIM_STALE_AFTER_S has passed.
      if (result.voided && route.connector.name !== 'sandbox') throw unavailable(LOST_ANSWER);
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
      // The change's span: its events (settlement, the webhook) carry it, so they hang under it.
      const updated = await inSpan('status change', { attributes: { 'gateway.status': change.status } }, () =>
        this.operations.recordApplied(row, operationId, change, result, (next) =>
          eventsOf(next, [{ event: judged.event, amount: judged.amount }]),
        ),
      );
      if (updated) {
        this.changes.poke();
        return viewOfRow(updated);
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
    const route = await this.changes.routeOf(row);
    // Without its account the acquirer cannot be asked: the claim stays until it can be.
    if (typeof route === 'string') throw new Error(`claim ${op.id}: ${route}`);
    const result = await route.connector.settle(operationRef(row, op.kind, op.operation_key, Number(op.amount), route));
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
      // Its holder died or lost its answer. The sandbox answers the same operation key from its
      // record, so this repeat completes it; a real acquirer would act twice: its outcome is read
      // by the reconciler (CLAIM_STALE_AFTER_S), never sent again.
      if ((await this.changes.connectorNameOf(row)) !== 'sandbox') throw unavailable(LOST_ANSWER);
      return this.execute(
        row,
        { id: op.id, requestId: op.request_id, kind: op.kind, amount: Number(op.amount), operationKey: op.operation_key },
        judgeHeld(op, row),
      );
    }
    if (op.state === 'applied') return viewOfRow(row);
    const result = op.result as unknown as AcquirerResult;
    if (op.state === 'voided') throw unavailable('The acquirer never received the operation and nothing was done; retry it.');
    throw conflict(ErrorCodes.InvalidState, `The acquirer refused the ${op.kind}: ${result.returnMessage} (${result.returnCode}).`);
  }
}

/**
 * The operation recorded for this request id. The same id for another request can only be a
 * collision or a forged job: never its answer.
 */
function sameRequest(known: OperationRow, kind: OperationKind, req: CaptureRequest): OperationRow {
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
  return known;
}
