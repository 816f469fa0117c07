import type { OperatorRow } from '@app/persistence';
import { html, SafeHtml } from './html';

/** The console's pages, in the header of every page (bull-board's queues last: it is another app). */
export const NAV: readonly (readonly [href: string, label: string])[] = [
  ['/console/overview', 'Overview'],
  ['/console/deliveries', 'Deliveries'],
  ['/console/listeners', 'Listeners'],
  ['/console/recover', 'Recover'],
  ['/admin/queues', 'Queues'],
];

export interface Frame {
  title: string;
  operator?: Pick<OperatorRow, 'name' | 'role'>;
  csrf: string;
  scripts?: string[];
}

export const when = (d: Date | string | null | undefined) =>
  d
    ? new Date(d)
        .toISOString()
        .replace('T', ' ')
        .replace(/\.\d+Z$/, 'Z')
    : '—';
export const state = (s: string) => html`<span class="state state-${s}">${s}</span>`;

/** Every page: the stylesheet, a header with the pages and sign-out, and scripts from /console/assets only. */
export function page(f: Frame, body: SafeHtml): string {
  return html`<!doctype html>
    <html lang="en">
      <head>
        <meta charset="utf-8" />
        <meta name="viewport" content="width=device-width, initial-scale=1" />
        <title>${f.title} · gateway console</title>
        <link rel="icon" href="data:," />
        <link rel="stylesheet" href="/console/assets/console.css" />
        ${(f.scripts ?? []).includes('uplot.js') ? html`<link rel="stylesheet" href="/console/assets/uplot.css" />` : ''}
      </head>
      <body>
        <header>
          <strong>Gateway console</strong>
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
        ${(f.scripts ?? []).map((s) => html`<script src="/console/assets/${s}"></script>`)}
      </body>
    </html> `.value;
}

export function problemPage(f: Frame, status: number, text: string): string {
  return page(
    { ...f, title: String(status) },
    html`<h1>${status}</h1>
      <p class="error" role="alert">${text}</p>
      <p><a href="/console/overview">Back to the console</a></p>`,
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
