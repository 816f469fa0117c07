import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { randomUUID } from 'node:crypto';
import { DataSource } from 'typeorm';
import { columns } from '../batching';
import { preparedStatement } from '../prepared';
import { changedRow, OperationKind, OutboxEvent, TransactionRow, Transition } from './transaction-rows';

export type OperationState = 'pending' | 'applied' | 'refused' | 'voided';

export interface OperationRow {
  id: string;
  /** The merchant's request this attempt serves (see CaptureRequest.operationId). */
  request_id: string;
  transaction_id: string;
  merchant_id: string;
  kind: OperationKind;
  amount: string;
  state: OperationState;
  operation_key: string;
  /** What the acquirer answered (no card data), once decided. */
  result: Record<string, unknown> | null;
  created_at: Date;
}

export interface OperationClaim {
  id: string;
  requestId: string;
  kind: OperationKind;
  amount: number;
  operationKey: string;
}

const OPERATION_COLUMNS = 'id, request_id, transaction_id, merchant_id, kind, amount, state, operation_key, result, created_at';

/**
 * Takes the transaction for one capture or cancel: only if nobody changed it since it was read
 * (status_version), nobody holds it, and (a cancel) the amount still fits beside what was
 * cancelled and charged back. The operation row is written in the same statement, so a claim
 * always names an operation that exists.
 */
const CLAIM = preparedStatement<{ id: string }>(
  'operations_claim',
  `WITH claimed AS (
     UPDATE transactions t SET pending_operation_id = $3, pending_kind = $4, pending_amount = $5, updated_at = now()
     WHERE t.id = $1 AND t.merchant_id = $2 AND t.status_version = $6 AND t.pending_operation_id IS NULL
       AND ($4 <> 'cancel' OR $5 <= (CASE WHEN t.captured_amount > 0 THEN t.captured_amount ELSE t.amount END) - t.cancelled_amount - t.charged_back_amount)
     RETURNING t.id, t.merchant_id)
   INSERT INTO transaction_operations (id, request_id, transaction_id, merchant_id, kind, amount, operation_key)
   SELECT $3, $8, id, merchant_id, $4, $5, $7 FROM claimed RETURNING id`,
);

/**
 * The operation's outcome, the transaction's change, the release of the claim and the change's
 * outbox events, in one statement: all of it only while this operation holds the transaction.
 */
const RECORD_APPLIED = preparedStatement<{ id: string }>(
  'operations_record_applied',
  `WITH changed AS (
     UPDATE transactions t SET status = $3, status_version = t.status_version + 1, captured_amount = $4, cancelled_amount = $5,
       processor = t.processor || $6::jsonb, pending_operation_id = NULL, pending_kind = NULL, pending_amount = NULL, updated_at = now()
     WHERE t.id = $1 AND t.pending_operation_id = $2 RETURNING t.id, t.status_version),
   decided AS (
     UPDATE transaction_operations o SET state = 'applied', result = $7::jsonb, status_version = changed.status_version, decided_at = now()
     FROM changed WHERE o.id = $2 AND o.state = 'pending'),
   events AS (
     INSERT INTO outbox (id, event, aggregate_id, payload)
     SELECT e.id, e.event, changed.id, e.payload FROM changed, unnest($8::uuid[], $9::text[], $10::jsonb[]) AS e (id, event, payload))
   SELECT id FROM changed`,
);

/**
 * The operation was not applied: the claim is released and the transaction left as it was.
 * `refused` (the acquirer declined) is the request's answer; `voided` (it never reached the
 * acquirer) lets the same request run again.
 */
const RECORD_NOT_APPLIED = preparedStatement<{ id: string }>(
  'operations_record_not_applied',
  `WITH released AS (
     UPDATE transactions t SET pending_operation_id = NULL, pending_kind = NULL, pending_amount = NULL, updated_at = now()
     WHERE t.id = $1 AND t.pending_operation_id = $2 RETURNING t.id),
   decided AS (
     UPDATE transaction_operations o SET state = $4, result = $3::jsonb, decided_at = now()
     FROM released WHERE o.id = $2 AND o.state = 'pending')
   SELECT id FROM released`,
);

const FIND = preparedStatement<OperationRow>('operations_find', `SELECT ${OPERATION_COLUMNS} FROM transaction_operations WHERE id = $1`);

/** The attempt of a request that counts (there is at most one that is not voided). */
const FIND_BY_REQUEST = preparedStatement<OperationRow>(
  'operations_find_by_request',
  `SELECT ${OPERATION_COLUMNS} FROM transaction_operations WHERE request_id = $1 AND state <> 'voided'`,
);

/**
 * Captures and cancels, one at a time per transaction. An operation first claims the transaction
 * (compare-and-set into "held by operation X"), only then talks to the acquirer, and records the
 * outcome while releasing the claim. The invariant every statement keeps: an operation is pending
 * exactly while its transaction names it.
 */
@Injectable()
export class OperationsRepository {
  constructor(@InjectDataSource() private readonly db: DataSource) {}

  find(id: string): Promise<OperationRow | undefined> {
    return FIND(this.db, [id]).then((rows) => rows[0]);
  }

  findByRequest(requestId: string): Promise<OperationRow | undefined> {
    return FIND_BY_REQUEST(this.db, [requestId]).then((rows) => rows[0]);
  }

  /** True when this operation now holds the transaction; false when `row` is no longer current. */
  async claim(row: TransactionRow, op: OperationClaim): Promise<boolean> {
    const rows = await CLAIM(this.db, [
      row.id,
      row.merchant_id,
      op.id,
      op.kind,
      op.amount,
      row.status_version,
      op.operationKey,
      op.requestId,
    ]);
    return rows.length === 1;
  }

  /**
   * Applies the operation held on `row` (read while the claim was held: only the holder changes
   * status and amounts, so `row` with `change` is what Postgres will hold). Returns the new row,
   * or undefined when the operation was no longer pending (another process decided it).
   */
  async recordApplied(
    row: TransactionRow,
    operationId: string,
    change: Transition,
    result: object,
    events: (next: TransactionRow) => OutboxEvent[],
  ): Promise<TransactionRow | undefined> {
    const next = { ...changedRow(row, change), pending_operation_id: null, pending_kind: null, pending_amount: null };
    const out = events(next);
    const rows = await RECORD_APPLIED(this.db, [
      row.id,
      operationId,
      change.status,
      next.captured_amount,
      next.cancelled_amount,
      JSON.stringify(change.processor ?? {}),
      JSON.stringify(result),
      ...columns(
        out,
        () => randomUUID(),
        (e) => e.event,
        (e) => JSON.stringify(e.payload),
      ),
    ]);
    return rows.length === 1 ? next : undefined;
  }

  /** Releases the claim without a change; false when the operation was no longer pending. */
  async recordNotApplied(transactionId: string, operationId: string, state: 'refused' | 'voided', result: object): Promise<boolean> {
    const rows = await RECORD_NOT_APPLIED(this.db, [transactionId, operationId, JSON.stringify(result), state]);
    return rows.length === 1;
  }

  /** Operations still pending after `olderThanS` seconds, oldest first (for the reconciler). */
  findStale(olderThanS: number, limit: number): Promise<OperationRow[]> {
    return this.db.query(
      `SELECT ${OPERATION_COLUMNS} FROM transaction_operations WHERE state = 'pending' AND created_at < now() - make_interval(secs => $1) ORDER BY created_at LIMIT $2`,
      [olderThanS, limit],
    );
  }
}
