import { RebillPaymentView, RebillState, RebillView, StatusMessages, TransactionStatus } from '@app/contracts';
import type { CycleRow, RebillRow, RebillsRepository } from '@app/persistence';
import { cardExpiresBeforeEnd, nextChargeDate } from './rebill-facts';

/** The TransactionResponse status of a rebill: 10 while it may charge, 6 cancelled, 4 suspended. */
export function rebillStatusOf(state: RebillState): TransactionStatus {
  if (state === 'cancelled') return TransactionStatus.Cancelled;
  if (state === 'suspended') return TransactionStatus.Unauthorized;
  return TransactionStatus.Scheduled;
}

/** The rebill as report, cancel and the suspension webhook show it. */
export function rebillViewOf(r: RebillRow, cycles: readonly CycleRow[]): RebillView {
  // A cycle shows its latest try (dunning retries replace the declined one).
  const latest = new Map<number, CycleRow>();
  for (const c of cycles) latest.set(c.cycle, c);
  const payments: RebillPaymentView[] = [...latest.values()].map((c) => ({
    cycle: c.cycle,
    date: c.cycle_date,
    ticket: c.transaction_id.toUpperCase(),
    tid: c.processor?.tid ?? '',
    amount: Number(c.amount),
    status: c.status,
    errorCode: c.error_code,
    returnCode: c.processor?.returnCode ?? '',
    returnMessage: c.processor?.returnMessage ?? '',
    attempt: c.attempt,
  }));
  const status = rebillStatusOf(r.state);
  const last = payments.at(-1);
  return {
    id: r.id.toUpperCase(),
    operation: 'rebill',
    status,
    statusVersion: r.version,
    errorCode: '',
    reference: r.reference,
    currency: r.currency.trim(),
    amount: Number(r.amount),
    capturedAmount: 0,
    cancelledAmount: 0,
    acquirer: r.acquirer,
    instalments: r.instalments,
    createdAt: new Date(r.created_at).toISOString(),
    processor: last
      ? {
          tid: last.tid,
          returnCode: last.returnCode,
          returnMessage: last.returnMessage || StatusMessages[last.status as TransactionStatus],
        }
      : {},
    tokenCard: r.token_card,
    payments,
    rebill: {
      state: r.state,
      period: r.period,
      frequency: r.frequency,
      dateStart: r.date_start,
      dateEnd: r.date_end,
      nextDate: nextChargeDate(r),
      cycles: latest.size,
      cardExpiresBeforeEnd: cardExpiresBeforeEnd(r),
      suspendedReason: r.suspended_reason ?? undefined,
    },
  };
}

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** The rebill as report answers it (every cycle so far), or undefined when the merchant (any, without one) has none by this id. */
export async function findRebillView(
  rebills: RebillsRepository,
  merchantId: string | undefined,
  id: string,
): Promise<RebillView | undefined> {
  if (!UUID.test(id)) return undefined;
  const row = await rebills.find(merchantId, id);
  if (!row) return undefined;
  return rebillViewOf(row, await rebills.chargesOf(row.id));
}
