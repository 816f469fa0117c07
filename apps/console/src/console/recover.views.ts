import { RecoveryRow } from '@app/persistence';
import { maskCardLike } from '@app/operators';
import { html } from './html';
import { Frame, page, state, when } from './layout';

/** What the operator typed (echoed back into the form). */
export interface RecoverForm {
  merchant?: string;
  origin?: string;
  since?: string;
  blocked?: string;
}

export type RecoveryView = RecoveryRow & { merchant: string };

const progressOf = (r: RecoveryRow) => html`${r.replayed} / ${r.total}`;

function recoverForm(q: RecoverForm) {
  const field = (name: keyof RecoverForm, label: string, type: string, placeholder: string, required = false) =>
    html`<label
      >${label}<input name="${name}" type="${type}" value="${q[name] ?? ''}" placeholder="${placeholder}" ${required ? html`required` : ''}
    /></label>`;
  return html`<form class="filters" id="recover-form" method="get" action="/console/recover/preview">
    ${field('merchant', 'Merchant id', 'text', '10 digits', true)}
    ${field('origin', 'Listener (optional)', 'text', 'https://shop.example:443 or shop.example')}
    ${field('since', 'Since (UTC)', 'datetime-local', '', true)}
    <label>Also blocked<input name="blocked" type="checkbox" value="1" ${q.blocked === '1' ? html`checked` : ''} /></label>
    <button type="submit" id="count">Count</button>
  </form>`;
}

export function recoverPage(f: Frame, v: { query: RecoverForm; recent: RecoveryView[]; problem?: string }): string {
  return page(
    f,
    html`<h1>Recover</h1>
      <p class="note">
        Replays every failed delivery of one merchant (optionally one listener) created since a time and before the recovery starts. Blocked
        deliveries (refused by the address guard) are replayed only when asked. The count is shown before anything is replayed.
      </p>
      ${recoverForm(v.query)} ${v.problem ? html`<p class="error" role="alert">${v.problem}</p>` : ''}
      <h2>Recent recoveries</h2>
      ${recoveriesTable(v.recent)}`,
  );
}

function recoveriesTable(rows: RecoveryView[]) {
  if (!rows.length) return html`<p class="note">No recovery yet.</p>`;
  return html`<table id="recoveries">
    <thead>
      <tr>
        <th>Started</th>
        <th>State</th>
        <th>Replayed</th>
        <th>Merchant</th>
        <th>Listener</th>
        <th>Since</th>
        <th>Recovery</th>
      </tr>
    </thead>
    <tbody>
      ${rows.map(
        (r) =>
          html`<tr data-recovery="${r.id}">
            <td>${when(r.created_at)}</td>
            <td>${state(r.state)}</td>
            <td>${progressOf(r)}</td>
            <td>${r.merchant}</td>
            <td>${r.origin ? maskCardLike(r.origin) : 'every listener'}</td>
            <td>${when(r.since)}</td>
            <td><a href="/console/recover/${r.id}">${r.id.slice(0, 8)}…</a></td>
          </tr>`,
      )}
    </tbody>
  </table>`;
}

export interface PreviewView {
  query: RecoverForm;
  merchant: string;
  origin?: string;
  since: Date;
  blocked: boolean;
  count: number;
}

export function previewPage(f: Frame, v: PreviewView): string {
  const what = v.blocked ? 'failed or blocked' : 'failed';
  return page(
    f,
    html`<h1>Recover</h1>
      ${recoverForm(v.query)}
      <p id="recover-count" class="card">
        <b>${v.count}</b> ${what} deliveries of merchant ${v.merchant} ${v.origin ? html`to ${maskCardLike(v.origin)}` : 'to any listener'}
        since ${when(v.since)} would be replayed.
      </p>
      ${
        v.count > 0
          ? html`<form method="post" action="/console/recover">
              <input type="hidden" name="_csrf" value="${f.csrf}" />
              <input type="hidden" name="merchant" value="${v.merchant}" />
              <input type="hidden" name="origin" value="${v.query.origin ?? ''}" />
              <input type="hidden" name="since" value="${v.since.toISOString()}" />
              <input type="hidden" name="blocked" value="${v.blocked ? '1' : ''}" />
              <p>
                <button class="primary" id="start" type="submit">Start the recovery</button>
                <span class="note">Needs the operator role. Deliveries that fail after it starts are not included.</span>
              </p>
            </form>`
          : html`<p class="note">Nothing to replay.</p>`
      }`,
  );
}

export function recoveryPage(f: Frame, r: RecoveryView, canCancel: boolean): string {
  const running = r.state === 'running';
  return page(
    f,
    html`<h1>Recovery ${r.id}</h1>
      <div class="cards">
        <div class="card">State<b id="recovery-state">${r.state}</b></div>
        <div class="card">Replayed<b id="recovery-progress">${progressOf(r)}</b></div>
        <div class="card">Skipped<b id="recovery-skipped">${r.skipped}</b></div>
      </div>
      ${running ? html`<p class="note">This page reloads itself every 2 seconds while the recovery runs.</p>` : ''}
      ${r.error ? html`<p class="error">${maskCardLike(r.error)}</p>` : ''}
      <table class="summary">
        <tr>
          <th>Merchant</th>
          <td>${r.merchant}</td>
          <th>Listener</th>
          <td>${r.origin ? maskCardLike(r.origin) : 'every listener'}</td>
        </tr>
        <tr>
          <th>Deliveries created</th>
          <td>from ${when(r.since)} to ${when(r.until)}</td>
          <th>States</th>
          <td>${r.states.join(', ')}</td>
        </tr>
        <tr>
          <th>Started</th>
          <td>${when(r.created_at)}</td>
          <th>Ended</th>
          <td>${when(r.finished_at)}</td>
        </tr>
      </table>
      <p class="note">Skipped: counted at the start but replayed or changed by someone else before the recovery reached them.</p>
      ${
        running && canCancel
          ? html`<form method="post" action="/console/recover/${r.id}/cancel">
              <input type="hidden" name="_csrf" value="${f.csrf}" />
              <p><button id="cancel" type="submit">Cancel the recovery</button></p>
            </form>`
          : ''
      }
      <p><a href="/console/recover">All recoveries</a></p>`,
  );
}
