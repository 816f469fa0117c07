import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource, EntityManager } from 'typeorm';
import { DomainError, ErrorCodes, PayableView, SettlementTerms, SplitResult } from '@app/contracts';
import { columns, inKeyOrder, statementBatcher } from '../batching';
import { preparedStatement } from '../prepared';
import { cancellationDebits, chargebackDebits, computeSplit, Debit, MERCHANT, methodKind, PayableCell, payableCells, processingFee } from '@app/split';

export type SettleOutcome = 'written' | 'already' | 'nothing_captured';

interface SettlementRow {
  transaction_id: string;
  merchant_id: string;
  gross: string;
  fee: string;
  split: SplitResult;
  cancelled: string;
  charged_back: string;
}

interface CapturedRow {
  id: string;
  merchant_id: string;
  captured_amount: string;
  instalments: number;
  method: number;
  details: { terms?: SettlementTerms };
}

interface CaptureClaim {
  id: string;
  merchantId: string;
  gross: number;
  fee: number;
  instalments: number;
  split: SplitResult;
  capturedOn: string;
  cells: PayableCell[];
}

/** What settling a capture writes: the split of the captured amount, payables per party × instalment. */
function captureClaim(id: string, t: CapturedRow, terms: SettlementTerms): CaptureClaim {
  const gross = Number(t.captured_amount);
  const fee = processingFee(gross, terms.fee);
  const split = computeSplit(terms.split ?? [], gross, fee);
  const capturedOn = today();
  return { id, merchantId: t.merchant_id, gross, fee, instalments: t.instalments, split, capturedOn, cells: payableCells(split, t.instalments, methodKind(t.method), capturedOn) };
}

interface PayableRow {
  transaction_id: string;
  recipient_id: string | null;
  kind: PayableView['kind'];
  instalment: number;
  due_date: string;
  gross: string;
  fee: string;
  net: string;
  status: string;
}

export interface LedgerDifference {
  transactionId: string;
  check: string;
  expected: number;
  actual: number;
}

const today = () => new Date().toISOString().slice(0, 10);
// Dates as text: node-pg would turn a date into a local-midnight Date and shift it by the zone.
const PAYABLE_COLUMNS = 'transaction_id, recipient_id, kind, instalment, due_date::text AS due_date, gross, fee, net, status';

/** How long settlement gathers captured events before settling them together. */
const CAPTURE_BATCH_MS = 20;

const READ_CAPTURED = preparedStatement<CapturedRow>(
  'settlement_read_captured',
  'SELECT id, merchant_id, captured_amount, instalments, method, details FROM transactions WHERE id = ANY($1::uuid[])',
);

/** Claims each settlement not claimed yet and writes its capture payables; returns the claimed ids. */
const CLAIM_CAPTURES = preparedStatement<{ transaction_id: string }>(
  'settlement_claim_captures',
  `WITH claimed AS (
     INSERT INTO settlements (transaction_id, merchant_id, gross, fee, instalments, split, captured_on)
     SELECT * FROM unnest($1::uuid[], $2::uuid[], $3::int8[], $4::int8[], $5::int[], $6::jsonb[], $7::date[])
     ON CONFLICT (transaction_id) DO NOTHING RETURNING transaction_id, merchant_id),
   payables AS (
     INSERT INTO payables (transaction_id, merchant_id, recipient_id, kind, instalment, due_date, gross, fee, net)
     SELECT claimed.transaction_id, claimed.merchant_id, c.recipient_id, 'capture', c.instalment, c.due_date, c.gross, c.fee, c.net
     FROM claimed JOIN unnest($8::uuid[], $9::uuid[], $10::int[], $11::date[], $12::int8[], $13::int8[], $14::int8[])
       AS c (transaction_id, recipient_id, instalment, due_date, gross, fee, net) ON c.transaction_id = claimed.transaction_id)
   SELECT transaction_id FROM claimed`,
);

/**
 * The payables ledger. Each write happens in one Postgres transaction that first claims or locks
 * the transaction's `settlements` row, so a re-delivered, concurrent or reordered event writes
 * nothing twice, and the amounts come from the split engine alone.
 */
@Injectable()
export class LedgerRepository {
  private readonly capture: (transactionId: string) => Promise<SettleOutcome>;

  constructor(@InjectDataSource() private readonly db: DataSource) {
    // Payables are written after the sale was answered and nobody waits on them: captures are
    // gathered for CAPTURE_BATCH_MS, so one read and one write serve many.
    this.capture = statementBatcher((ids) => this.claimCaptures(this.db.manager, ids), { delayMs: CAPTURE_BATCH_MS });
  }

  /** On transaction.captured: the split of the captured amount, as payables per party × instalment. */
  settleCapture(transactionId: string): Promise<SettleOutcome> {
    // No explicit transaction: a read, then one statement that claims and writes (two round
    // trips), shared by the captures that arrive together.
    return this.capture(transactionId);
  }

  /**
   * On transaction.cancelled: the debits that bring the settled cancellations up to what the
   * transaction has cancelled now. The amount is read from the transaction, never taken from the
   * event, and a cancel that arrives before its capture was settled settles the capture first:
   * the order of events, or a late or repeated one, never matters.
   */
  settleCancel(transactionId: string): Promise<SettleOutcome> {
    return this.db.transaction(async (tx) => {
      let s = await this.lockSettlement(tx, transactionId);
      if (!s) {
        // A cancelled authorization was never captured: nothing was paid out, nothing to reverse.
        if ((await this.claimCapture(tx, transactionId)) === 'nothing_captured') return 'nothing_captured';
        s = (await this.lockSettlement(tx, transactionId))!;
      }
      const [t]: { cancelled_amount: string }[] = await tx.query('SELECT cancelled_amount FROM transactions WHERE id = $1', [transactionId]);
      const before = Number(s.cancelled);
      // What a chargeback already took back cannot be refunded again (the tokenizer refuses such a
      // cancel; should one get through, ledger:verify shows the difference instead of a job
      // failing forever).
      const target = Math.min(Number(t.cancelled_amount), Number(s.gross) - Number(s.charged_back));
      if (target <= before) return 'already';
      await this.writeDebits(tx, s, 'cancel', cancellationDebits(s.split, before, target));
      await tx.query('UPDATE settlements SET cancelled = $2 WHERE transaction_id = $1', [transactionId, target]);
      return 'written';
    });
  }

  /**
   * A chargeback of `amount` cents (SPLIT.md 7): debits the liable entries, else the merchant.
   * With the acquirer's `chargebackId`, recording the same chargeback again changes nothing.
   */
  recordChargeback(transactionId: string, amount: number, chargebackId?: string): Promise<{ chargedBack: number; debits: Debit[]; repeated: boolean }> {
    return this.db.transaction(async (tx) => {
      let s = await this.lockSettlement(tx, transactionId);
      if (!s) {
        // A chargeback may come before settlement got to the capture: settle it first.
        if ((await this.claimCapture(tx, transactionId)) === 'nothing_captured') {
          throw new DomainError('not_found', ErrorCodes.TransactionNotFound, `No captured amount for transaction ${transactionId}.`);
        }
        s = (await this.lockSettlement(tx, transactionId))!;
      }
      const before = Number(s.charged_back);
      if (chargebackId !== undefined) {
        const known: { amount: string }[] = await tx.query('SELECT amount FROM chargebacks WHERE transaction_id = $1 AND chargeback_id = $2', [transactionId, chargebackId]);
        if (known.length) {
          if (Number(known[0].amount) !== amount) throw DomainError.validation(ErrorCodes.InvalidField, 'amount', `chargeback ${chargebackId} was recorded with ${known[0].amount} cents, not ${amount}.`);
          return { chargedBack: before, debits: [], repeated: true };
        }
      }
      // Judged on the transaction's row, under its lock, beside its cancels and a cancel still in
      // flight (its amount is reserved); a cancel's claim re-checks the same columns when it takes
      // the row after this: a chargeback and a cancel can never both take the same cents back.
      const [t]: { open: string }[] = await tx.query(
        `SELECT captured_amount - cancelled_amount - charged_back_amount - CASE WHEN pending_kind = 'cancel' THEN pending_amount ELSE 0 END AS open
         FROM transactions WHERE id = $1 FOR UPDATE`,
        [transactionId],
      );
      const open = Math.max(0, Number(t.open));
      if (amount > open) {
        throw DomainError.validation(ErrorCodes.InvalidField, 'amount', `amount must not exceed the ${open} cents captured and neither cancelled (nor being cancelled) nor charged back.`);
      }
      await tx.query('UPDATE transactions SET charged_back_amount = charged_back_amount + $2, updated_at = now() WHERE id = $1', [transactionId, amount]);
      const debits = chargebackDebits(s.split, before, before + amount);
      await this.writeDebits(tx, s, 'chargeback', debits);
      await tx.query('UPDATE settlements SET charged_back = $2 WHERE transaction_id = $1', [transactionId, before + amount]);
      if (chargebackId !== undefined) await tx.query('INSERT INTO chargebacks (transaction_id, chargeback_id, amount) VALUES ($1, $2, $3)', [transactionId, chargebackId, amount]);
      return { chargedBack: before + amount, debits, repeated: false };
    });
  }

  async payablesOf(merchantId: string, transactionId: string): Promise<PayableView[]> {
    const rows: PayableRow[] = await this.db.query(`SELECT ${PAYABLE_COLUMNS} FROM payables WHERE transaction_id = $1 AND merchant_id = $2 ORDER BY id`, [transactionId, merchantId]);
    return rows.map(toView);
  }

  async list(by: { recipientId: string } | { merchantId: string }): Promise<(PayableView & { transactionId: string })[]> {
    const rows: PayableRow[] =
      'recipientId' in by
        ? await this.db.query(`SELECT ${PAYABLE_COLUMNS} FROM payables WHERE recipient_id::text = lower($1) ORDER BY due_date, id`, [by.recipientId])
        : await this.db.query(`SELECT ${PAYABLE_COLUMNS} FROM payables WHERE merchant_id::text = lower($1) ORDER BY due_date, id`, [by.merchantId]);
    return rows.map((r) => ({ transactionId: r.transaction_id.toUpperCase(), ...toView(r) }));
  }

  /**
   * ledger:verify. For every transaction: a captured amount has its settlement; capture payables
   * add up to the captured gross and to the fee; cancel debits to the cancelled amount; chargeback
   * debits to the charged-back amount; and per party the cells match the stored split.
   */
  async verify(merchantId?: string): Promise<{ transactions: number; differences: LedgerDifference[] }> {
    const scope = merchantId ? [merchantId.toLowerCase()] : [];
    const rows: { id: string; captured: string; cancelled: string; charged_back: string; s_gross: string | null; s_fee: string | null; s_cancelled: string | null; s_cb: string | null;
      cap_gross: string; cap_fee: string; cancel_gross: string; cb_gross: string }[] = await this.db.query(`
      SELECT t.id, t.captured_amount AS captured, t.cancelled_amount AS cancelled, t.charged_back_amount AS charged_back,
             s.gross AS s_gross, s.fee AS s_fee, s.cancelled AS s_cancelled, s.charged_back AS s_cb,
             COALESCE(SUM(p.gross) FILTER (WHERE p.kind = 'capture'), 0) AS cap_gross,
             COALESCE(SUM(p.fee) FILTER (WHERE p.kind = 'capture'), 0) AS cap_fee,
             COALESCE(SUM(p.gross) FILTER (WHERE p.kind = 'cancel'), 0) AS cancel_gross,
             COALESCE(SUM(p.gross) FILTER (WHERE p.kind = 'chargeback'), 0) AS cb_gross
      FROM transactions t
      LEFT JOIN settlements s ON s.transaction_id = t.id
      LEFT JOIN payables p ON p.transaction_id = t.id
      WHERE (t.captured_amount > 0 OR s.transaction_id IS NOT NULL) ${merchantId ? 'AND t.merchant_id::text = $1' : ''}
      GROUP BY t.id, s.transaction_id`, scope);
    const differences: LedgerDifference[] = [];
    const check = (id: string, name: string, expected: number, actual: number) => {
      if (expected !== actual) differences.push({ transactionId: id.toUpperCase(), check: name, expected, actual });
    };
    for (const r of rows) {
      check(r.id, 'settled gross = captured amount', Number(r.captured), Number(r.s_gross ?? 0));
      if (r.s_gross === null) continue;
      check(r.id, 'capture payables gross = captured amount', Number(r.s_gross), Number(r.cap_gross));
      check(r.id, 'capture payables fee = processing fee', Number(r.s_fee), Number(r.cap_fee));
      check(r.id, 'settled cancellations = cancelled amount', Number(r.cancelled), Number(r.s_cancelled));
      check(r.id, 'cancel debits = cancelled amount', Number(r.s_cancelled), Number(r.cancel_gross));
      check(r.id, 'chargeback debits = charged back amount', Number(r.s_cb), Number(r.cb_gross));
      check(r.id, 'settled chargebacks = transaction charged back', Number(r.charged_back), Number(r.s_cb));
    }
    const parties: { transaction_id: string; party: string; gross: string; fee: string; net: string; expected: SplitResult }[] = await this.db.query(`
      SELECT p.transaction_id, COALESCE(p.recipient_id::text, '${MERCHANT}') AS party, SUM(p.gross) AS gross, SUM(p.fee) AS fee, SUM(p.net) AS net, s.split AS expected
      FROM payables p JOIN settlements s ON s.transaction_id = p.transaction_id
      WHERE p.kind = 'capture' ${merchantId ? 'AND p.merchant_id::text = $1' : ''} GROUP BY p.transaction_id, party, s.split`, scope);
    for (const p of parties) {
      const share = p.party === MERCHANT ? p.expected.merchant : p.expected.entries.find((e) => e.recipient === p.party);
      for (const col of ['gross', 'fee', 'net'] as const) check(p.transaction_id, `${p.party} ${col}`, share?.[col] ?? NaN, Number(p[col]));
    }
    return { transactions: rows.length, differences };
  }

  /** Claims the transaction's settlement and writes its capture payables, unless already done. */
  private async claimCapture(tx: EntityManager, transactionId: string): Promise<SettleOutcome> {
    const [outcome] = await this.claimCaptures(tx, [transactionId]);
    if (outcome instanceof Error) throw outcome;
    return outcome;
  }

  /**
   * claimCapture for many transactions in two statements: one read, then one statement that
   * claims every settlement not claimed yet and writes its payables (a transaction twice in the
   * list is claimed by its first entry; the second finds it done). Per transaction, its outcome,
   * or an Error for it alone.
   */
  private async claimCaptures(tx: EntityManager, given: readonly string[]): Promise<(SettleOutcome | Error)[]> {
    const ids = given.map((id) => id.toLowerCase()); // one spelling per transaction, as Postgres returns it
    const read = await READ_CAPTURED(tx, [ids]);
    const byId = new Map(read.map((t) => [t.id, t]));
    const outcomes = new Map<string, SettleOutcome | Error>();
    const claims: CaptureClaim[] = [];
    for (const id of new Set(ids)) {
      const t = byId.get(id);
      const gross = t ? Number(t.captured_amount) : 0;
      if (!t || gross === 0) outcomes.set(id, 'nothing_captured');
      else if (!t.details.terms) outcomes.set(id, new Error(`transaction ${id} has no settlement terms`));
      else claims.push(captureClaim(id, t, t.details.terms));
    }
    if (claims.length) {
      const ordered = inKeyOrder(claims, (c) => c.id);
      const cells = ordered.flatMap((c) => c.cells.map((cell) => ({ c, cell })));
      // The claims and their payables in one statement: all or none, and a second delivery of an
      // event finds its claim taken and writes nothing.
      const written = await CLAIM_CAPTURES(tx, [
          ...columns(ordered, (c) => c.id, (c) => c.merchantId, (c) => c.gross, (c) => c.fee, (c) => c.instalments, (c) => JSON.stringify(c.split), (c) => c.capturedOn),
          ...columns(
            cells,
            ({ c }) => c.id,
            ({ cell }) => (cell.party === MERCHANT ? null : cell.party),
            ({ cell }) => cell.instalment,
            ({ cell }) => cell.dueDate,
            ({ cell }) => cell.gross,
            ({ cell }) => cell.fee,
            ({ cell }) => cell.net,
          ),
        ],
      );
      const claimed = new Set(written.map((w) => w.transaction_id));
      for (const c of claims) outcomes.set(c.id, claimed.has(c.id) ? 'written' : 'already');
    }
    const seen = new Set<string>();
    // A transaction twice in the list: its first entry did the work, the second finds it done.
    return ids.map((id) => {
      const outcome = outcomes.get(id)!;
      if (seen.has(id) && outcome === 'written') return 'already';
      seen.add(id);
      return outcome;
    });
  }

  private async lockSettlement(tx: EntityManager, transactionId: string): Promise<SettlementRow | undefined> {
    const rows: SettlementRow[] = await tx.query('SELECT * FROM settlements WHERE transaction_id = $1 FOR UPDATE', [transactionId]);
    return rows[0];
  }

  private writeDebits(tx: EntityManager, s: SettlementRow, kind: 'cancel' | 'chargeback', debits: Debit[]): Promise<void> {
    const on = today();
    return this.insertPayables(tx, s.transaction_id, s.merchant_id, kind, debits.map((d) => ({ party: d.party, instalment: 1, dueDate: on, gross: d.amount, fee: 0, net: d.amount })));
  }

  private async insertPayables(tx: EntityManager, transactionId: string, merchantId: string, kind: PayableView['kind'], cells: PayableCell[]): Promise<void> {
    if (!cells.length) return;
    const values: unknown[] = [];
    const tuples = cells.map((c, i) => {
      values.push(c.party === MERCHANT ? null : c.party, c.instalment, c.dueDate, c.gross, c.fee, c.net);
      const b = i * 6 + 4;
      return `($1, $2, $${b}, $3, $${b + 1}, $${b + 2}, $${b + 3}, $${b + 4}, $${b + 5})`;
    });
    await tx.query(
      `INSERT INTO payables (transaction_id, merchant_id, recipient_id, kind, instalment, due_date, gross, fee, net) VALUES ${tuples.join(', ')}`,
      [transactionId, merchantId, kind, ...values],
    );
  }
}

function toView(r: PayableRow): PayableView {
  return {
    party: r.recipient_id ?? MERCHANT,
    kind: r.kind,
    instalment: r.instalment,
    dueDate: r.due_date,
    gross: Number(r.gross),
    fee: Number(r.fee),
    net: Number(r.net),
    status: r.status,
  };
}
