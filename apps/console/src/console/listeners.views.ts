import type { ListenerAttemptRates, ListenerPageRow } from '@app/persistence';
import { html } from './html';
import { filterField, Frame, page, state, stateSelect, when } from './layout';

export interface ListenerView {
  /** Origin and host card-masked; `masked` when that changed them (no buttons then: the form would name another listener). */
  row: ListenerPageRow & { merchant: string; masked: boolean };
  rates?: ListenerAttemptRates;
}

export interface ListenersView {
  query: Record<string, string>;
  rows: ListenerView[];
  /** The signed-in operator may disable and enable (the server checks again on every POST). */
  canAct: boolean;
  next?: string;
  problem?: string;
  notice?: { ok: boolean; text: string };
}

/** "97.5% of 40", or "—" with no attempt in the period. */
function rate(ok: number | undefined, attempts: number | undefined): string {
  if (!attempts) return '—';
  return `${Math.round(((ok ?? 0) * 1000) / attempts) / 10}% of ${attempts}`;
}

function disabledBy(r: ListenerPageRow): string {
  if (r.state !== 'disabled') return '';
  const who = r.disabled_by === 'auto' ? 'auto (kept failing)' : (r.disabled_by_name ?? r.disabled_by ?? 'unknown');
  return `by ${who} at ${when(r.disabled_at)}`;
}

export function listenersPage(f: Frame, v: ListenersView): string {
  const q = v.query;
  const field = (name: string, label: string, placeholder: string) => filterField(q, name, label, 'text', placeholder);
  const nextHref = v.next ? `/console/listeners?${new URLSearchParams({ ...q, after: v.next }).toString()}` : undefined;
  return page(
    f,
    html`<h1>Listeners</h1>
      <p class="note">
        One row per merchant and listener origin. Worst first: disabled listeners, then the most consecutive failures. Rates count the
        attempts that started in the period (2xx answers succeeded). A disabled listener's deliveries are held, not attempted; enabling it
        releases them oldest first.
      </p>
      <form class="filters" method="get" action="/console/listeners">
        ${field('merchant', 'Merchant id', '10 digits')} ${stateSelect(q, ['disabled', 'enabled'])}
        ${field('host', 'Listener host', 'shop.example')}
        <button type="submit">Filter</button> <a href="/console/listeners">clear</a>
      </form>
      ${v.notice ? html`<p class="${v.notice.ok ? 'ok' : 'error'}" role="status" id="notice">${v.notice.text}</p>` : ''}
      ${v.problem ? html`<p class="error" role="alert">${v.problem}</p>` : ''}
      <table id="listeners">
        <thead>
          <tr>
            <th>Merchant</th>
            <th>Listener</th>
            <th>State</th>
            <th>Success 1 h</th>
            <th>Success 24 h</th>
            <th>Consecutive failures</th>
            <th>Failing since</th>
            <th>Last success</th>
            <th>Held</th>
            <th></th>
          </tr>
        </thead>
        <tbody>
          ${v.rows.map((shown) => listenerRow(f, v, shown))}
        </tbody>
      </table>
      ${v.rows.length === 0 ? html`<p class="note">No listeners match.</p>` : ''}
      ${v.canAct ? '' : html`<p class="note">Disabling and enabling needs the operator role; you are a ${f.operator?.role ?? 'viewer'}.</p>`}
      ${nextHref ? html`<p><a id="next-page" href="${nextHref}">Next page →</a></p>` : ''}`,
  );
}

/** One listener: its rates, failures and held deliveries, and its buttons for an operator who may act. */
function listenerRow(f: Frame, v: ListenersView, { row: r, rates }: ListenerView) {
  return html`<tr data-listener="${r.merchant} ${r.origin}">
    <td>${r.merchant}</td>
    <td>${r.origin}</td>
    <td class="listener-state">${state(r.state)} <span class="note">${disabledBy(r)}</span></td>
    <td class="rate-1h">${rate(rates?.ok_1h, rates?.attempts_1h)}</td>
    <td class="rate-24h">${rate(rates?.ok_24h, rates?.attempts_24h)}</td>
    <td>${r.consecutive_failures}</td>
    <td>${when(r.failing_since)}</td>
    <td>${when(r.last_success_at)}</td>
    <td class="held">${r.held}</td>
    <td>
      <a href="/console/deliveries?${new URLSearchParams({ merchant: r.merchant, host: r.host }).toString()}">deliveries</a>
      ${
        v.canAct && !r.masked
          ? html`${r.state === 'enabled' ? action(f, r, 'disable', 'Disable') : ''}
            ${r.state === 'disabled' ? action(f, r, 'enable', 'Enable') : ''}
            ${r.state === 'enabled' && r.held > 0 ? action(f, r, 'enable', 'Release held') : ''}`
          : ''
      }
    </td>
  </tr>`;
}

/** A disable or enable button: a form naming the listener, with this session's token. */
function action(f: Frame, r: ListenerView['row'], verb: 'disable' | 'enable', label: string) {
  return html`<form class="inline" method="post" action="/console/listeners/${verb}">
    <input type="hidden" name="_csrf" value="${f.csrf}" />
    <input type="hidden" name="merchant" value="${r.merchant}" />
    <input type="hidden" name="origin" value="${r.origin}" />
    <button class="${verb}" type="submit">${label}</button>
  </form>`;
}
