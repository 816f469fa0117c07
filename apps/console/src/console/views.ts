import type { DeliveryListRow, DeliveryOverview, DeliveryRow } from '@app/persistence';
import { DELIVERY_STATUSES } from '@app/persistence';
import { html } from './html';
import { baseOf, filterField, Frame, hostOf, page, state, stateSelect, when } from './layout';

export function signInPage(csrf: string, problem?: string): string {
  return page(
    { title: 'Sign in', csrf },
    html`<form class="signin" method="post" action="/console/sign-in" autocomplete="off">
      <h1>Sign in</h1>
      <p class="note">
        Paste your operator token (operator:create printed it, <code>op_…</code>). It is checked once; the browser keeps only a signed
        session for 8 hours.
      </p>
      ${problem ? html`<p class="error" role="alert">${problem}</p>` : ''}
      <input type="hidden" name="_csrf" value="${csrf}" />
      <label for="token">Operator token</label>
      <input id="token" name="token" type="password" required />
      <button class="primary" type="submit">Sign in</button>
    </form>`,
  );
}

export interface ListView {
  query: Record<string, string>;
  rows: (DeliveryListRow & { merchant: string })[];
  next?: string;
  problem?: string;
}

/** The deliveries list; in the portal (one merchant) without the merchant filter and column. */
export function deliveriesPage(f: Frame, v: ListView): string {
  const q = v.query;
  const base = baseOf(f);
  const everyMerchant = base === '/console';
  const field = (name: string, label: string, type = 'text', placeholder = '') => filterField(q, name, label, type, placeholder);
  const nextHref = v.next ? `${base}/deliveries?${new URLSearchParams({ ...q, after: v.next }).toString()}` : undefined;
  return page(
    f,
    html`<h1>Deliveries</h1>
      <form class="filters" method="get" action="${base}/deliveries">
        ${everyMerchant ? field('merchant', 'Merchant id', 'text', '10 digits') : ''} ${stateSelect(q, DELIVERY_STATUSES)}
        ${field('host', 'Listener host', 'text', 'shop.example')} ${field('transaction', 'Transaction id', 'text', 'uuid')}
        ${field('event', 'Event', 'text', 'transaction.status')} ${field('from', 'From (UTC)', 'datetime-local')}
        ${field('to', 'To (UTC)', 'datetime-local')}
        <button type="submit">Filter</button> <a href="${base}/deliveries">clear</a>
      </form>
      ${v.problem ? html`<p class="error" role="alert">${v.problem}</p>` : ''}
      <table id="deliveries">
        <thead>
          <tr>
            <th>Created</th>
            <th>State</th>
            <th>Attempts</th>
            <th>Next attempt</th>
            <th>Last error</th>
            ${everyMerchant ? html`<th>Merchant</th>` : ''}
            <th>Event</th>
            <th>Listener</th>
            <th>Delivery</th>
          </tr>
        </thead>
        <tbody>
          ${v.rows.map(
            (r) =>
              html`<tr data-delivery="${r.id}">
                <td>${when(r.created_at)}</td>
                <td>${state(r.status)}</td>
                <td>${r.attempts}</td>
                <td>${r.status === 'pending' ? when(r.next_attempt_at) : '—'}</td>
                <td>${r.last_error_class ?? '—'}${r.last_http_status ? ` (${r.last_http_status})` : ''}</td>
                ${everyMerchant ? html`<td>${r.merchant}</td>` : ''}
                <td>${r.event}</td>
                <td>${hostOf(r.url)}</td>
                <td><a href="${base}/deliveries/${r.id}">${r.id.slice(0, 8)}…</a></td>
              </tr>`,
          )}
        </tbody>
      </table>
      ${v.rows.length === 0 ? html`<p class="note">No deliveries match.</p>` : ''}
      ${nextHref ? html`<p><a id="next-page" href="${nextHref}">Next page →</a></p>` : ''}`,
  );
}

export interface AttemptView {
  attempt: number;
  started_at: Date;
  duration_ms: number;
  http_status: number | null;
  error_class: string | null;
  /** First 1 KiB of the answer, card-like numbers masked. */
  answer: string | null;
  /** The attempt's trace (console only), with its link in the trace store when one is configured. */
  trace?: { id: string; href?: string };
}

export interface DetailView {
  delivery: Omit<DeliveryRow, 'body' | 'merchant_id'> & { merchant: string };
  /** The exact body sent, card-like numbers masked. */
  body: string;
  attempts: AttemptView[];
  canReplay: boolean;
  /** The console shows each attempt's trace; the portal does not. */
  showTraces?: boolean;
  notice?: { ok: boolean; text: string };
}

function traceCell(t: AttemptView['trace']) {
  if (!t) return '—';
  return t.href ? html`<a href="${t.href}" rel="noopener noreferrer" target="_blank"><code>${t.id}</code></a>` : html`<code>${t.id}</code>`;
}

export function detailPage(f: Frame, v: DetailView): string {
  const d = v.delivery;
  const replayable = d.status === 'failed' || d.status === 'blocked';
  return page(
    f,
    html`<h1>Delivery ${d.id}</h1>
      ${v.notice ? html`<p class="${v.notice.ok ? 'ok' : 'error'}" role="status" id="notice">${v.notice.text}</p>` : ''} ${summaryTable(d)}
      ${replayable ? replayOffer(f, v) : ''}
      <h2>Attempts</h2>
      <table id="attempts">
        <thead>
          <tr>
            <th>#</th>
            <th>Time</th>
            <th>Duration</th>
            <th>HTTP status</th>
            <th>Error class</th>
            <th>Answer (first 1 KiB)</th>
            ${v.showTraces ? html`<th>Trace</th>` : ''}
          </tr>
        </thead>
        <tbody>
          ${v.attempts.map(
            (a) =>
              html`<tr>
                <td>${a.attempt}</td>
                <td>${when(a.started_at)}</td>
                <td>${a.duration_ms} ms</td>
                <td>${a.http_status ?? '—'}</td>
                <td>${a.error_class ?? '—'}</td>
                <td>${a.answer ? html`<pre>${a.answer}</pre>` : '—'}</td>
                ${v.showTraces ? html`<td class="trace">${traceCell(a.trace)}</td>` : ''}
              </tr>`,
          )}
        </tbody>
      </table>
      ${v.attempts.length === 0 ? html`<p class="note">No attempt yet.</p>` : ''}
      <h2>What was sent</h2>
      <p class="note">
        Every attempt sends this body unchanged (POST, <code>content-type: application/json</code>) with the Standard Webhooks headers
        <code>webhook-id: ${d.id}</code>, <code>webhook-timestamp</code> and <code>webhook-signature</code>. The timestamp and signature are
        made per attempt and are not recorded, so they are not shown.
      </p>
      <pre id="body">${v.body}</pre>`,
  );
}

/** The delivery's state, merchant, transaction, listener and times. */
function summaryTable(d: DetailView['delivery']) {
  return html`<table class="summary">
    <tr>
      <th>State</th>
      <td id="delivery-state">${state(d.status)}</td>
      <th>Attempts</th>
      <td>${d.attempts} (replays ${d.replays})</td>
    </tr>
    <tr>
      <th>Merchant</th>
      <td>${d.merchant}</td>
      <th>Transaction</th>
      <td>${d.transaction_id} (status version ${d.status_version})</td>
    </tr>
    <tr>
      <th>Event</th>
      <td>${d.event}</td>
      <th>Listener</th>
      <td>${d.url}</td>
    </tr>
    <tr>
      <th>Created</th>
      <td>${when(d.created_at)}</td>
      <th>Next attempt</th>
      <td>${d.status === 'pending' ? when(d.next_attempt_at) : '—'}</td>
    </tr>
    <tr>
      <th>Succeeded</th>
      <td>${when(d.succeeded_at)}</td>
      <th>Last error</th>
      <td>${d.last_error ?? '—'}</td>
    </tr>
  </table>`;
}

/** A failed or blocked delivery's replay button, or why this operator has none. */
function replayOffer(f: Frame, v: DetailView) {
  const d = v.delivery;
  return v.canReplay
    ? html`<form method="post" action="${baseOf(f)}/deliveries/${d.id}/replay">
        <input type="hidden" name="_csrf" value="${f.csrf}" />
        <p>
          <button class="primary" id="replay" type="submit">Replay this delivery</button>
          <span class="note">Sends the same body again with the same webhook-id, on a fresh retry schedule.</span>
        </p>
      </form>`
    : html`<p class="note">Replaying needs the operator role; you are a ${f.operator?.role ?? 'viewer'}.</p>`;
}

export function overviewPage(
  f: Frame,
  o: DeliveryOverview & { failing: { merchant: string; host: string; failed: number; last_failed_at: Date }[] },
): string {
  // Every minute of the 24 h, empty ones as 0, so the chart's time axis is always the whole day.
  const byMinute = new Map(o.perMinute.map((p) => [p.minute, p]));
  const end = Math.floor(Date.now() / 60_000) * 60;
  const t = Array.from({ length: 24 * 60 }, (_, i) => end - (24 * 60 - 1 - i) * 60);
  const series = { t, ok: t.map((m) => byMinute.get(m)?.succeeded ?? 0), failed: t.map((m) => byMinute.get(m)?.failed ?? 0) };
  return page(
    { ...f, scripts: ['uplot.js', 'console.js'] },
    html`<h1>Overview</h1>
      <h2>Backlog by state</h2>
      <div class="cards" id="backlog">
        ${['pending', 'sending', 'held', 'failed', 'blocked', 'succeeded'].map(
          (s) => html`<div class="card">${state(s)}<b>${o.backlog.find((b) => b.status === s)?.n ?? 0}</b></div>`,
        )}
      </div>
      <h2>Oldest delivery waiting</h2>
      ${
        o.oldestOpen
          ? html`<p>
              <a href="/console/deliveries/${o.oldestOpen.id}">${o.oldestOpen.id}</a> · ${state(o.oldestOpen.status)} · created
              ${when(o.oldestOpen.created_at)} · ${hostOf(o.oldestOpen.url)}
            </p>`
          : html`<p class="note">Nothing pending.</p>`
      }
      <h2>Attempts per minute, last 24 h</h2>
      <div id="per-minute" data-series="${JSON.stringify(series)}"></div>
      <h2>Listeners failing most (failed attempts, last 24 h)</h2>
      <table id="failing">
        <thead>
          <tr>
            <th>Merchant</th>
            <th>Listener host</th>
            <th>Failed attempts</th>
            <th>Last failure</th>
            <th></th>
          </tr>
        </thead>
        <tbody>
          ${o.failing.map(
            (l) =>
              html`<tr>
                <td>${l.merchant}</td>
                <td>${l.host}</td>
                <td>${l.failed}</td>
                <td>${when(l.last_failed_at)}</td>
                <td>
                  <a href="/console/deliveries?${new URLSearchParams({ merchant: l.merchant, host: l.host, state: 'failed' }).toString()}"
                    >failed deliveries</a
                  >
                </td>
              </tr>`,
          )}
        </tbody>
      </table>
      ${o.failing.length === 0 ? html`<p class="note">No failed attempts in the last 24 hours.</p>` : ''}`,
  );
}
