import type { OperatorRow } from '@app/persistence';
import { html, SafeHtml } from './html';

/** The console's pages, in the header of every page (bull-board's queues last: it is another app). */
export const NAV: readonly (readonly [href: string, label: string])[] = [
  ['/console/overview', 'Overview'],
  ['/console/deliveries', 'Deliveries'],
  ['/console/listeners', 'Listeners'],
  ['/console/recover', 'Recover'],
  ['/console/rebills', 'Rebills'],
  ['/admin/queues', 'Queues'],
];

export interface Frame {
  title: string;
  operator?: Pick<OperatorRow, 'name' | 'role'>;
  csrf: string;
  scripts?: string[];
  /** '/portal' for the merchant portal's pages (no console header, its own assets and links); the console's otherwise. */
  base?: '/console' | '/portal';
  /** The portal's header: whose deliveries these are and until when the link works. */
  portal?: { merchant: string; expiresAt: Date };
  /** Where the browser goes next on its own (a meta refresh: no script needed). */
  refresh?: string;
  /** Reload the page every this many seconds (a <meta http-equiv=refresh>: no script needed). */
  refreshS?: number;
}

export const baseOf = (f: Pick<Frame, 'base'>) => f.base ?? '/console';

export const when = (d: Date | string | null | undefined) =>
  d
    ? new Date(d)
        .toISOString()
        .replace('T', ' ')
        .replace(/\.\d+Z$/, 'Z')
    : '—';
export const state = (s: string) => html`<span class="state state-${s}">${s}</span>`;

/**
 * Every page: the stylesheet, a header with the pages and sign-out (in the portal: the merchant and
 * the link's expiry, nothing of the console), and scripts from the scope's own assets only.
 */
export function page(f: Frame, body: SafeHtml): string {
  const base = baseOf(f);
  return html`<!doctype html>
    <html lang="en">
      <head>
        <meta charset="utf-8" />
        <meta name="viewport" content="width=device-width, initial-scale=1" />
        ${f.refreshS ? html`<meta http-equiv="refresh" content="${f.refreshS}" />` : ''}
        <title>${f.title} · ${base === '/portal' ? 'webhook deliveries' : 'gateway console'}</title>
        <link rel="icon" href="data:," />
        ${f.refresh ? html`<meta http-equiv="refresh" content="0;url=${f.refresh}" />` : ''}
        <link rel="stylesheet" href="${base}/assets/console.css" />
        ${(f.scripts ?? []).includes('uplot.js') ? html`<link rel="stylesheet" href="${base}/assets/uplot.css" />` : ''}
      </head>
      <body>
        <header>
          ${
            base === '/portal'
              ? html`<strong>Webhook deliveries</strong> ${
                    f.portal
                      ? html`<span class="who">merchant ${f.portal.merchant} · this link works until ${when(f.portal.expiresAt)}</span>`
                      : ''
                  }`
              : html`<strong>Gateway console</strong>`
          }
          ${
            f.operator
              ? html`${NAV.map(([href, label]) => html`<a href="${href}">${label}</a> `)}
                  <span class="who">${f.operator.name} (${f.operator.role})</span>
                  <form method="post" action="/console/sign-out">
                    <input type="hidden" name="_csrf" value="${f.csrf}" /><button type="submit">Sign out</button>
                  </form>`
              : ''
          }
        </header>
        <main>${body}</main>
        ${(f.scripts ?? []).map((s) => html`<script src="${base}/assets/${s}"></script>`)}
      </body>
    </html> `.value;
}

export function problemPage(f: Frame, status: number, text: string): string {
  const back =
    baseOf(f) === '/portal'
      ? f.portal && html`<p><a href="/portal/deliveries">Back to the deliveries</a></p>`
      : html`<p><a href="/console/overview">Back to the console</a></p>`;
  return page(
    { ...f, title: String(status) },
    html`<h1>${status}</h1>
      <p class="error" role="alert">${text}</p>
      ${back}`,
  );
}

export function hostOf(url: string): string {
  try {
    return new URL(url).host;
  } catch {
    return url.slice(0, 80);
  }
}

/** A text (or other) input of a list page's filter form, showing the value the page was asked with. */
export const filterField = (q: Record<string, string>, name: string, label: string, type: string, placeholder = '') =>
  html`<label>${label}<input name="${name}" type="${type}" value="${q[name] ?? ''}" placeholder="${placeholder}" /></label>`;

/** The state select of a list page's filter form ('' is any). */
export const stateSelect = (q: Record<string, string>, states: readonly string[]) =>
  html`<label
    >State<select name="state">
      ${['', ...states].map((s) => html`<option value="${s}" ${q.state === s ? html` selected` : ''}>${s || 'any'}</option>`)}
    </select></label
  >`;
