import { THROTTLE_OFF, WEBHOOK_THROTTLE_RANGE } from '@app/webhooks';
import { html } from './html';
import { Frame, page } from './layout';

export interface MerchantView {
  /** The public id (10 digits). */
  merchant: string;
  /** Deliveries per second to each listener; null: no throttle. */
  throttlePerS: number | null;
  canSet: boolean;
  /** The value sent, shown again with the problem. */
  given?: string;
  problem?: string;
  saved?: boolean;
}

/** A merchant's settings: its webhook throttle, and the form that sets it (operator role). */
export function merchantPage(f: Frame, v: MerchantView): string {
  const current = v.throttlePerS === null ? 'off (no throttle)' : `${v.throttlePerS} deliveries per second to each listener`;
  return page(
    f,
    html`<h1>Merchant ${v.merchant}</h1>
      <p><a id="merchant-rebills" href="/console/rebills?${new URLSearchParams({ merchant: v.merchant }).toString()}">Rebills</a></p>
      ${v.saved ? html`<p class="ok" role="status" id="notice">Saved. The notifiers apply it within 5 seconds.</p>` : ''}
      <h2>Webhook throttle</h2>
      <p id="throttle">${current}</p>
      <p class="note">
        At most this many deliveries per second reach each of the merchant's listeners, counted together by every notifier. A delivery over
        it waits for its turn: it is not an attempt, and says nothing about the listener's health.
      </p>
      ${v.problem ? html`<p class="error" role="alert" id="problem">${v.problem}</p>` : ''}
      ${
        v.canSet
          ? html`<form method="post" action="/console/merchants/${v.merchant}/webhook-throttle">
              <input type="hidden" name="_csrf" value="${f.csrf}" />
              <label for="perSecond"
                >Deliveries per second (${WEBHOOK_THROTTLE_RANGE.min}–${WEBHOOK_THROTTLE_RANGE.max}, or ${THROTTLE_OFF})</label
              >
              <input
                id="perSecond"
                name="perSecond"
                type="text"
                inputmode="numeric"
                value="${v.given ?? (v.throttlePerS === null ? THROTTLE_OFF : String(v.throttlePerS))}"
                required
              />
              <button class="primary" id="set-throttle" type="submit">Set throttle</button>
            </form>`
          : html`<p class="note">Setting it needs the operator role; you are a ${f.operator?.role ?? 'viewer'}.</p>`
      }`,
  );
}
