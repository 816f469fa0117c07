import { randomUUID } from 'node:crypto';
import { EntityManager } from 'typeorm';
import { Events, TransactionEvent } from '@app/contracts';
import { columns } from '../batching';
import { saleDetailsJson } from '../transactions/sale-details';
import type { TransactionRow } from '../transactions/transaction-rows';
import type { AdvanceRow, AdvanceWrite, ChargeToOpen } from './rebill-rows';

/**
 * The statements that open a rebill's charges and move a rebill on from a decided one, each run in
 * the caller's Postgres transaction (`m`); RebillsRepository runs them for libs/rebills, which
 * decides what they write.
 */

/** The columns of RebillRow, of the rebills table under `alias`; dates as YYYY-MM-DD text. */
export const rebillColumns = (a = 'rebills') => `${a}.id, ${a}.merchant_id, ${a}.reference, ${a}.state, ${a}.period, ${a}.frequency,
  to_char(${a}.date_start, 'YYYY-MM-DD') AS date_start, to_char(${a}.date_end, 'YYYY-MM-DD') AS date_end, ${a}.retry_days, ${a}.due_shift_days, ${a}.acquirer,
  ${a}.instalments, ${a}.currency, ${a}.amount, ${a}.token_card, ${a}.masked_card, ${a}.brand,
  to_char(${a}.card_expires, 'YYYY-MM-DD') AS card_expires, ${a}.details, ${a}.url_return, ${a}.next_cycle, ${a}.next_attempt,
  ${a}.next_due_at, ${a}.open_transaction_id, ${a}.suspended_reason, ${a}.version, ${a}.created_at, ${a}.updated_at`;
export const REBILL_COLUMNS = rebillColumns();

const TX_COLUMNS = `id, merchant_id, reference, operation, status, status_version, acquirer, method, instalments, currency, amount,
  captured_amount, cancelled_amount, masked_card, brand, token_card, error_code, processor, details, url_return, created_at,
  charged_back_amount, pending_operation_id, pending_kind, pending_amount`;

const INSERT_TRANSACTIONS = `INSERT INTO transactions (id, merchant_id, reference, operation, status, acquirer, method, instalments, currency, amount,
     masked_card, brand, token_card, details, url_return)
   SELECT id, merchant_id, reference, 3, 0, acquirer, method, instalments, currency, amount, masked_card, brand, token_card, details, url_return
   FROM unnest($1::uuid[], $2::uuid[], $3::text[], $4::int[], $5::int[], $6::int[], $7::text[], $8::int8[], $9::text[], $10::text[], $11::text[], $12::jsonb[], $13::text[])
     AS i (id, merchant_id, reference, acquirer, method, instalments, currency, amount, masked_card, brand, token_card, details, url_return)
   ON CONFLICT (id) DO NOTHING
   RETURNING ${TX_COLUMNS}`;

const INSERT_CYCLES = `INSERT INTO rebill_cycles (rebill_id, cycle, attempt, transaction_id, cycle_date, merchant_initiated)
   SELECT * FROM unnest($1::uuid[], $2::int[], $3::int[], $4::uuid[], $5::date[], $6::boolean[])
   ON CONFLICT DO NOTHING`;

/** Inserts charges' transactions and cycles; returns the transactions in the order given. */
export async function insertCharges(m: EntityManager, charges: readonly ChargeToOpen[]): Promise<(TransactionRow | undefined)[]> {
  const rows = await m.query<TransactionRow[]>(
    INSERT_TRANSACTIONS,
    columns(
      charges,
      (c) => c.tx.id,
      (c) => c.tx.merchantId,
      (c) => c.tx.reference,
      (c) => c.tx.acquirer,
      (c) => c.tx.method,
      (c) => c.tx.instalments,
      (c) => c.tx.currency,
      (c) => c.tx.amount,
      (c) => c.tx.maskedCard,
      (c) => c.tx.brand,
      (c) => c.tx.tokenCard ?? null,
      (c) => saleDetailsJson(c.tx.details),
      (c) => c.tx.urlReturn ?? null,
    ),
  );
  // A charge already recorded (a rebill restored from a backup taken before its charge moved it
  // on) is the same charge: it is opened again as it stands, never recorded twice, and decided
  // (or answered from its decision) under its own operation key.
  await m.query(
    INSERT_CYCLES,
    columns(
      charges,
      (c) => c.rebillId,
      (c) => c.cycle,
      (c) => c.attempt,
      (c) => c.tx.id,
      (c) => c.date,
      (c) => c.mit,
    ),
  );
  const byId = new Map(rows.map((r) => [r.id, r]));
  return charges.map((c) => byId.get(c.tx.id.toLowerCase()));
}

/**
 * Locks the rebills of `keys` whose open charge is the one given and is decided, with that charge's
 * outcome and cycle. A rebill locked by someone else is skipped (see RebillLifecycle in libs/rebills).
 */
export function lockDecided(m: EntityManager, keys: readonly { rebillId: string; transactionId: string }[]): Promise<AdvanceRow[]> {
  return m.query<AdvanceRow[]>(
    `SELECT ${rebillColumns('r')}, t.status AS t_status, t.error_code AS t_error_code, t.processor->>'returnCode' AS t_return_code,
       c.cycle AS c_cycle, c.attempt AS c_attempt, c.created_at AS c_opened_at
     FROM rebills r JOIN unnest($1::uuid[], $2::uuid[]) AS k (id, tx) ON r.id = k.id AND r.open_transaction_id = k.tx
       JOIN transactions t ON t.id = k.tx JOIN rebill_cycles c ON c.transaction_id = k.tx
     WHERE t.status <> 0
     ORDER BY r.id FOR UPDATE OF r SKIP LOCKED`,
    [keys.map((k) => k.rebillId), keys.map((k) => k.transactionId)],
  );
}

/** Moves the rebills on as decided: the open charge closed, the next one scheduled (or none). */
export async function writeAdvances(m: EntityManager, updates: readonly AdvanceWrite[]): Promise<void> {
  await m.query(
    `UPDATE rebills r SET state = u.state, next_cycle = u.cycle, next_attempt = u.attempt, next_due_at = u.due,
       open_transaction_id = NULL, suspended_reason = u.reason, version = r.version + 1, updated_at = now()
     FROM unnest($1::uuid[], $2::text[], $3::int[], $4::int[], $5::timestamptz[], $6::text[]) AS u (id, state, cycle, attempt, due, reason)
     WHERE r.id = u.id`,
    columns(
      updates,
      (u) => u.r.id,
      (u) => u.state,
      (u) => u.cycle,
      (u) => u.attempt,
      (u) => u.due,
      (u) => u.reason,
    ),
  );
}

/** Records transaction events in the outbox (its relay publishes them). */
export async function insertOutboxEvents(m: EntityManager, payloads: readonly TransactionEvent[]): Promise<void> {
  await m.query(
    `INSERT INTO outbox (id, event, aggregate_id, payload) SELECT * FROM unnest($1::uuid[], $2::text[], $3::uuid[], $4::jsonb[])`,
    columns(
      payloads,
      () => randomUUID(),
      () => Events.TransactionStatusChanged,
      (p) => p.transactionId.toLowerCase(),
      (p) => JSON.stringify(p),
    ),
  );
}
