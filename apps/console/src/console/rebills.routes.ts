import type { RebillState } from '@app/contracts';
import { MerchantsRepository, RebillPageCursor, RebillRow, RebillsRepository } from '@app/persistence';
import { maskCardLike } from '@app/operators';
import { ConsoleKit } from './console-kit';
import { isPgTime } from './deliveries.routes';
import { problemPage } from './layout';
import { cursorKey, cursorText, filtersOf, sharedFilters, UUID } from './list-query';
import { REBILL_STATES, rebillPage, rebillsPage, RebillShown } from './rebills.views';

const PAGE_SIZE = 50;

/**
 * The Rebills pages (issue 18): a merchant's rebills, newest first, filtered by state and paged by
 * keyset; and a rebill's schedule with every charge of it, dunning retries included. Read-only: the
 * viewer role is enough, and nothing is written or audited. Of the card, only the masked number and
 * the brand are shown (never the token or the expiry: only whether it falls before the schedule
 * ends); the merchant's own texts (reference, listener URL) and the acquirer's return messages are
 * card-masked as on every other page.
 */
export function registerRebillRoutes(kit: ConsoleKit): void {
  const { scope, app, frame, send } = kit;
  const rebills = app.get(RebillsRepository);
  const merchants = app.get(MerchantsRepository);

  scope.get('/rebills', async (req, reply) => {
    const raw = req.query as Record<string, unknown>;
    const query = filtersOf(raw, ['merchant', 'state']);
    const f = frame(req, reply, 'Rebills');
    const problem = (text: string) => send(reply, 400, rebillsPage(f, { query, rows: [], problem: text }));
    const shared = await sharedFilters(merchants, query, REBILL_STATES, raw.after, cursorOf);
    if ('problem' in shared) return problem(shared.problem);
    const { merchantId, after } = shared;
    // One merchant at a time: the table's index is (merchant, created_at, id), so a page is read off it.
    if (!merchantId) return send(reply, 200, rebillsPage(f, { query, rows: [] }));
    const rows = await rebills.list({ merchantId, state: query.state as RebillState | undefined, before: after, limit: PAGE_SIZE + 1 });
    const shown = rows.slice(0, PAGE_SIZE);
    const merchant = (await merchants.publicIdsOf([merchantId])).get(merchantId) ?? merchantId;
    const last = shown[shown.length - 1];
    return send(
      reply,
      200,
      rebillsPage(f, {
        query,
        merchant,
        rows: shown.map((r) => ({ ...shownOf(r, merchant), cycles_charged: r.cycles_charged })),
        next: rows.length > PAGE_SIZE && last ? cursorText([last.cursor, last.id]) : undefined,
      }),
    );
  });

  scope.get('/rebills/:id', async (req, reply) => {
    const id = (req.params as { id: string }).id;
    const row = UUID.test(id) ? await rebills.find(undefined, id) : undefined;
    if (!row)
      return send(
        reply,
        404,
        problemPage(frame(req, reply, 'Rebill'), 404, 'No such rebill (its id is the transactionId rebill answered).'),
      );
    const [charges, ids] = await Promise.all([rebills.chargesOf(row.id), merchants.publicIdsOf([row.merchant_id])]);
    const rebill = shownOf(row, ids.get(row.merchant_id) ?? row.merchant_id);
    return send(
      reply,
      200,
      rebillPage(frame(req, reply, `Rebill ${rebill.reference.slice(0, 40)}`), {
        rebill,
        charges: charges.map((c) => ({ ...c, returnMessage: maskCardLike(c.processor?.returnMessage ?? '') })),
      }),
    );
  });
}

/** What a page may show of a rebill: the card token left out, the merchant's texts card-masked. */
function shownOf(r: RebillRow, merchant: string): RebillShown {
  return {
    ...r,
    token_card: '',
    details: { method: r.details.method },
    reference: maskCardLike(r.reference),
    url_return: r.url_return === null ? null : maskCardLike(r.url_return),
    merchant,
  };
}

function cursorOf(v: string): RebillPageCursor | null {
  const key = cursorKey(v, 2);
  if (!key) return null;
  const [createdAt, id] = key;
  if (typeof createdAt !== 'string' || typeof id !== 'string' || !UUID.test(id) || !isPgTime(createdAt)) return null;
  return { createdAt, id };
}
