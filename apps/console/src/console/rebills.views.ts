import { ErrorCodeDescriptions, RebillPeriod, RebillPeriods, RebillState, StatusMessages } from '@app/contracts';
import type { CycleRow, RebillListRow, RebillRow } from '@app/persistence';
import { cardExpiresBeforeEnd, chargeDueDate, nextChargeDate, scheduledCycles } from '@app/rebills';
import { html, SafeHtml } from './html';
import { filterField, Frame, page, state, stateSelect, when } from './layout';

export const REBILL_STATES: readonly RebillState[] = ['active', 'suspended', 'cancelled', 'completed'];

const PERIOD_UNITS: Record<RebillPeriod, [one: string, many: string]> = {
  [RebillPeriods.Daily]: ['day', 'days'],
  [RebillPeriods.Weekly]: ['week', 'weeks'],
  [RebillPeriods.Monthly]: ['month', 'months'],
  [RebillPeriods.Yearly]: ['year', 'years'],
};

const SUSPENDED_BECAUSE: Record<string, string> = {
  hard_decline: 'a decline retrying cannot cure (card expired, lost, stolen, blocked or cancelled)',
  retries_exhausted: 'declined on its first try and on every retry',
};

/** "every month", "every 2 weeks". */
export function periodText(period: RebillPeriod, frequency: number): string {
  const [one, many] = PERIOD_UNITS[period] ?? ['period', 'periods'];
  return frequency === 1 ? `every ${one}` : `every ${frequency} ${many}`;
}

/** "1990 (986)": integer minor units as on the wire, and the currency. */
const money = (amount: string | number, currency: string) => `${amount} (${currency.trim()})`;

function nextText(r: RebillRow): SafeHtml {
  if (r.open_transaction_id) return html`<span class="note">charging now (cycle ${r.next_cycle})</span>`;
  const next = nextChargeDate(r);
  if (!next) return html`—`;
  return html`${next}${r.next_attempt > 0 ? html` <span class="note">retry ${r.next_attempt} of cycle ${r.next_cycle}</span>` : ''}`;
}

function suspendedText(reason: string | null): SafeHtml {
  if (!reason) return html`—`;
  const why = SUSPENDED_BECAUSE[reason];
  return html`<span class="reason">${reason}</span>${why ? html` <span class="note">(${why})</span>` : ''}`;
}

const expiresFlag = (r: RebillRow) =>
  cardExpiresBeforeEnd(r)
    ? html`<span
        class="state state-expiring"
        title="The card expires before the schedule ends: later cycles will be declined unless it is replaced"
        >card expires before end</span
      >`
    : html`<span class="note">valid through the end</span>`;

/** A rebill row as the pages show it: reference and listener URL card-masked, nothing else of the card than its masked number. */
export type RebillShown = RebillRow & { merchant: string };

export interface RebillsView {
  query: Record<string, string>;
  /** The merchant listed (its public id), once the filter named one that exists. */
  merchant?: string;
  rows: (RebillShown & Pick<RebillListRow, 'cycles_charged'>)[];
  next?: string;
  problem?: string;
}

/** One merchant's rebills, newest first, filtered by state. */
export function rebillsPage(f: Frame, v: RebillsView): string {
  const q = v.query;
  const nextHref = v.next ? `/console/rebills?${new URLSearchParams({ ...q, after: v.next }).toString()}` : undefined;
  return page(
    f,
    html`<h1>Rebills${v.merchant ? html` of merchant <a href="/console/merchants/${v.merchant}">${v.merchant}</a>` : ''}</h1>
      <p class="note">
        A merchant's recurring charges (rebill on /v1/receiver), newest first, 50 a page. Amounts are in minor units (cents), with the
        currency's ISO 4217 number. A cycle counts as charged once a charge of it was approved; the rebill's page lists every charge,
        dunning retries included.
      </p>
      <form class="filters" method="get" action="/console/rebills">
        ${filterField(q, 'merchant', 'Merchant id', 'text', '10 digits')} ${stateSelect(q, REBILL_STATES)}
        <button type="submit">Filter</button>
        <a href="/console/rebills${q.merchant ? `?merchant=${encodeURIComponent(q.merchant)}` : ''}">clear</a>
      </form>
      ${v.problem ? html`<p class="error" role="alert">${v.problem}</p>` : ''}
      ${
        q.merchant === undefined && !v.problem
          ? html`<p class="note" id="ask-merchant">Enter a merchant id: rebills are listed one merchant at a time.</p>`
          : html`<table id="rebills">
                <thead>
                  <tr>
                    <th>Reference</th>
                    <th>State</th>
                    <th>Amount</th>
                    <th>Every</th>
                    <th>From – to</th>
                    <th>Next charge</th>
                    <th>Cycles charged</th>
                    <th>Suspended because</th>
                    <th>Card</th>
                    <th>Created</th>
                  </tr>
                </thead>
                <tbody>
                  ${v.rows.map(
                    (r) =>
                      html`<tr data-rebill="${r.id}">
                        <td class="reference"><a href="/console/rebills/${r.id}">${r.reference}</a></td>
                        <td class="rebill-state">${state(r.state)}</td>
                        <td class="nowrap">${money(r.amount, r.currency)}</td>
                        <td>${periodText(r.period, r.frequency)}</td>
                        <td class="nowrap">${r.date_start} – ${r.date_end}</td>
                        <td class="next nowrap">${nextText(r)}</td>
                        <td class="cycles">${r.cycles_charged} of ${scheduledCycles(r)}</td>
                        <td class="suspended">${suspendedText(r.suspended_reason)}</td>
                        <td class="card">${r.masked_card} ${expiresFlag(r)}</td>
                        <td>${when(r.created_at)}</td>
                      </tr>`,
                  )}
                </tbody>
              </table>
              ${v.rows.length === 0 ? html`<p class="note">No rebills match.</p>` : ''}`
      }
      ${nextHref ? html`<p><a id="next-page" href="${nextHref}">Next page →</a></p>` : ''}`,
  );
}

export interface RebillView {
  rebill: RebillShown;
  charges: (CycleRow & { returnMessage: string })[];
}

const statusText = (status: number) => `${status} ${StatusMessages[status as keyof typeof StatusMessages] ?? ''}`.trim();
const statusClass = (status: number) => (status === 8 ? 'succeeded' : status === 0 ? 'pending' : status === 4 ? 'failed' : 'cancelled');
const errorText = (code: string) =>
  code ? html`${code} <span class="note">${ErrorCodeDescriptions[code as keyof typeof ErrorCodeDescriptions] ?? ''}</span>` : html`—`;

/** A rebill's schedule and where it stands, and every charge of it, dunning retries included. */
export function rebillPage(f: Frame, v: RebillView): string {
  const r = v.rebill;
  const charged = new Set(v.charges.filter((c) => c.status === 8 || c.status === 12).map((c) => c.cycle)).size;
  return page(
    f,
    html`<h1>Rebill ${r.id.toUpperCase()}</h1>
      ${scheduleTable(r, v, charged)}
      <h2>Charges</h2>
      <p class="note">
        Every charge, in cycle and attempt order: attempt 0 is a cycle's first try, 1 and up its dunning retries. Each is a sale of its own
        (the transaction id); the first cycle of a rebill starting the day it was created is charged with the card holder present, the
        others are merchant-initiated.
      </p>
      <table id="charges">
        <thead>
          <tr>
            <th>Cycle</th>
            <th>Attempt</th>
            <th>Cycle date</th>
            <th>Due</th>
            <th>Opened</th>
            <th>Transaction</th>
            <th>Initiated by</th>
            <th>Amount</th>
            <th>Status</th>
            <th>Error code</th>
            <th>Return code</th>
          </tr>
        </thead>
        <tbody>
          ${v.charges.map((c) => chargeRow(r, c))}
        </tbody>
      </table>
      ${v.charges.length === 0 ? html`<p class="note">No charge yet.</p>` : ''}`,
  );
}

/** The rebill's schedule: what it charges, how often, and where it stands. */
function scheduleTable(r: RebillShown, v: RebillView, charged: number) {
  return html`<table class="summary" id="schedule">
    <tr>
      <th>Reference</th>
      <td id="rebill-reference">${r.reference}</td>
      <th>State</th>
      <td id="rebill-state">${state(r.state)}</td>
    </tr>
    <tr>
      <th>Merchant</th>
      <td><a href="/console/rebills?${new URLSearchParams({ merchant: r.merchant }).toString()}">${r.merchant}</a></td>
      <th>Suspended because</th>
      <td>${suspendedText(r.suspended_reason)}</td>
    </tr>
    <tr>
      <th>Amount</th>
      <td>
        ${money(r.amount, r.currency)}, ${r.instalments} ${r.instalments === 1 ? 'instalment' : 'instalments'}, acquirer ${r.acquirer}
      </td>
      <th>Every</th>
      <td>${periodText(r.period, r.frequency)}</td>
    </tr>
    <tr>
      <th>From – to</th>
      <td>${r.date_start} – ${r.date_end} (${scheduledCycles(r)} cycles)</td>
      <th>Next charge</th>
      <td id="rebill-next">${nextText(r)}</td>
    </tr>
    <tr>
      <th>Cycles charged</th>
      <td id="rebill-cycles">
        ${charged} of ${scheduledCycles(r)} (${v.charges.length} ${v.charges.length === 1 ? 'charge' : 'charges'} tried)
      </td>
      <th>Retries after a decline</th>
      <td>${r.retry_days.length ? `${r.retry_days.join(', ')} days after the cycle's date` : 'none'}</td>
    </tr>
    <tr>
      <th>Card</th>
      <td id="rebill-card">${r.masked_card} ${r.brand} · ${expiresFlag(r)}</td>
      <th>Listener</th>
      <td>${r.url_return ?? '—'}</td>
    </tr>
    <tr>
      <th>Created</th>
      <td>${when(r.created_at)}</td>
      <th>Updated</th>
      <td>${when(r.updated_at)} (version ${r.version})</td>
    </tr>
  </table>`;
}

/** One charge of the rebill: a cycle's first try or one of its dunning retries. */
function chargeRow(r: RebillShown, c: RebillView['charges'][number]) {
  return html`<tr data-charge="${c.cycle}-${c.attempt}">
    <td>${c.cycle}</td>
    <td>${c.attempt === 0 ? 'first try' : `retry ${c.attempt}`}</td>
    <td class="nowrap">${c.cycle_date}</td>
    <td class="nowrap">${chargeDueDate(r, c)}</td>
    <td>${when(c.created_at)}</td>
    <td class="transaction">
      ${c.transaction_id.toUpperCase()}
      <a class="note" href="/console/deliveries?${new URLSearchParams({ transaction: c.transaction_id }).toString()}">webhooks</a>
    </td>
    <td class="initiator">${c.merchant_initiated ? 'merchant' : 'card holder'}</td>
    <td class="nowrap">${money(c.amount, r.currency)}</td>
    <td class="status">
      <span class="state state-${statusClass(c.status)}">${statusText(c.status)}</span>
      ${c.returnMessage ? html`<span class="note">${c.returnMessage}</span>` : ''}
    </td>
    <td class="error-code">${errorText(c.error_code)}</td>
    <td class="return-code">${c.processor?.returnCode || '—'}</td>
  </tr>`;
}
