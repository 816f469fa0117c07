import { Injectable } from '@nestjs/common';
import { MERCHANT } from '@app/contracts/parties';
import { LedgerRepository } from '@app/persistence';

export interface LedgerDifference {
  transactionId: string;
  check: string;
  expected: number;
  actual: number;
}

export interface LedgerReport {
  transactions: number;
  differences: LedgerDifference[];
}

/**
 * ledger:verify. For every transaction (of one merchant, or all): a captured amount has its
 * settlement; capture payables add up to the captured gross and to the fee; cancel debits to the
 * cancelled amount; chargeback debits to the charged-back amount; and per party the cells match
 * the stored split.
 */
@Injectable()
export class VerifyLedger {
  constructor(private readonly ledger: LedgerRepository) {}

  async run(merchantId?: string): Promise<LedgerReport> {
    const rows = await this.ledger.ledgerTotals(merchantId);
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
    for (const p of await this.ledger.capturePartyTotals(merchantId)) {
      const share = p.party === MERCHANT ? p.expected.merchant : p.expected.entries.find((e) => e.recipient === p.party);
      for (const col of ['gross', 'fee', 'net'] as const) check(p.transaction_id, `${p.party} ${col}`, share?.[col] ?? NaN, Number(p[col]));
    }
    return { transactions: rows.length, differences };
  }
}
