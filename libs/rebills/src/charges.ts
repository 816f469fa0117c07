import { AuthorizeRequest, rebillChargeId } from '@app/contracts';
import { saleSnapshotOf } from '@app/persistence';
import type { ChargeToOpen, NewRebill, NewTransaction, OpenedCharge, RebillRow } from '@app/persistence';
import { cycleDate, RebillSchedule } from './schedule';

/** The schedule fields of a rebill's row. */
export function scheduleOf(r: RebillRow): RebillSchedule {
  return {
    period: r.period,
    frequency: r.frequency,
    dateStart: r.date_start,
    dateEnd: r.date_end,
    retryDays: r.retry_days,
    shiftDays: r.due_shift_days,
  };
}

/** The transaction of a rebill's charge, as a sale of the card on file with the rebill's terms. */
export function chargeOf(r: RebillRow, id: string, cycle: number, attempt: number): NewTransaction {
  return {
    id,
    merchantId: r.merchant_id,
    reference: r.reference,
    operation: 'sale',
    acquirer: r.acquirer,
    method: r.details.method,
    instalments: r.instalments,
    currency: r.currency,
    amount: Number(r.amount),
    maskedCard: r.masked_card,
    brand: r.brand,
    tokenCard: r.token_card,
    details: {
      groupNumber: r.details.groupNumber,
      departureTax: r.details.departureTax,
      billing: r.details.billing,
      fraud: r.details.fraud,
      terms: r.details.terms,
      rebill: { id: r.id.toUpperCase(), cycle, attempt },
    },
    urlReturn: r.url_return ?? undefined,
  };
}

/** The first charge of the rebill `planned`, opened at its creation (cycle 1, first try), as recorded in `row`. */
export function firstChargeOf(row: RebillRow, planned: Pick<NewRebill, 'id' | 'dateStart'>): ChargeToOpen {
  const tx = chargeOf(row, rebillChargeId(planned.id, 1, 0), 1, 0);
  // The card holder takes part in this one: it carries the security code sent with the rebill.
  return { tx, rebillId: planned.id, cycle: 1, attempt: 0, date: planned.dateStart, mit: false };
}

/** The next charge of a due rebill: the try `next_attempt` of its cycle `next_cycle`. */
export function nextChargeOf(r: RebillRow): ChargeToOpen & { rebill: RebillRow } {
  const date = cycleDate(r.date_start, r.period, r.frequency, r.next_cycle);
  const id = rebillChargeId(r.id, r.next_cycle, r.next_attempt);
  return {
    rebill: r,
    tx: chargeOf(r, id, r.next_cycle, r.next_attempt),
    rebillId: r.id,
    cycle: r.next_cycle,
    attempt: r.next_attempt,
    date,
    // The card holder took part in the first charge only (at creation, with the security code).
    mit: true,
  };
}

/** The authorization of a rebill's charge: a sale of the card on file. */
export function chargeRequest(c: OpenedCharge): AuthorizeRequest {
  return {
    transactionId: c.transactionId,
    merchantId: c.merchantId,
    tokenCard: c.tokenCard,
    capture: true,
    saveCard: false,
    rebill: { id: c.rebillId, merchantInitiated: c.merchantInitiated },
    recorded: c.recorded && saleSnapshotOf(c.recorded),
  };
}
