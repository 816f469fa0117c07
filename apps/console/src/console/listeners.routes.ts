import { DeliveriesRepository, ListenerPageCursor, ListenersRepository, ListenerState, MerchantsRepository } from '@app/persistence';
import { AuditSubject, maskCardLike, RefusedError, roleAllows } from '@app/operators';
import { listenerOrigin } from '@app/webhooks';
import { disableListener, enableListener } from '@app/webhooks/delivery';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { AdminQueues } from '../admin/admin-queues';
import { ConsoleKit, subjectOf } from './console-kit';
import { problemPage } from './layout';
import { cursorSealer, filtersOf, sharedFilters, UUID } from './list-query';
import { listenersPage, ListenersView } from './listeners.views';

const STATES: readonly ListenerState[] = ['enabled', 'disabled'];
/** What the listeners table accepts as an origin (its CHECK constraint). */
const ORIGIN = /^https?:\/\/[^/?#]+:[0-9]+$/;
const PAGE_SIZE = 50;
const MAX_INT = 2 ** 31 - 1;

/** The notice a page shows after a disable or enable (POST, then redirect here). */
const NOTICES = new Map<string, (released: number) => { ok: boolean; text: string }>(
  Object.entries({
    disabled: () => ({ ok: true, text: 'Listener disabled: its new deliveries and retries are held, not attempted, until it is enabled.' }),
    enabled: (n) => ({
      ok: true,
      text: `Listener enabled: ${n} held ${n === 1 ? 'delivery' : 'deliveries'} released, oldest first (reload to follow their state).`,
    }),
    'already-disabled': () => ({ ok: false, text: 'That listener is disabled already.' }),
    'not-disabled': () => ({ ok: false, text: 'That listener is not disabled and holds no delivery.' }),
  }),
);

/**
 * The Listeners page: every merchant's listeners (merchant × origin), worst first, with their
 * success rates over 1 h and 24 h, failures and held deliveries; and disable / enable, which need
 * the operator role (checked by the server: a viewer's POST is refused with 403 and audited) and
 * are audited as the CLI's listener:disable and listener:enable are (same action, target and
 * detail, plus how the console was reached).
 */
export function registerListenerRoutes(kit: ConsoleKit): void {
  const { scope, app, csrf } = kit;
  const pages: ListenerPages = {
    ...kit,
    listeners: app.get(ListenersRepository),
    deliveries: app.get(DeliveriesRepository),
    merchants: app.get(MerchantsRepository),
    queues: app.get(AdminQueues),
    cursors: cursorSealer(kit.config.consoleSessionKey),
  };
  scope.get('/listeners', (req, reply) => listenersList(pages, req, reply));
  scope.post('/listeners/disable', { preHandler: csrf }, (req, reply) => act(pages, req, reply, 'disable'));
  scope.post('/listeners/enable', { preHandler: csrf }, (req, reply) => act(pages, req, reply, 'enable'));
}

/** A ConsoleKit and what the Listeners page reads and acts through. */
interface ListenerPages extends ConsoleKit {
  listeners: ListenersRepository;
  deliveries: DeliveriesRepository;
  merchants: MerchantsRepository;
  queues: AdminQueues;
  cursors: ReturnType<typeof cursorSealer>;
}

async function listenersList(kit: ListenerPages, req: FastifyRequest, reply: FastifyReply) {
  const { send, listeners, merchants, cursors } = kit;
  const raw = req.query as Record<string, unknown>;
  const query = filtersOf(raw, ['merchant', 'state', 'host']);
  const f = kit.frame(req, reply, 'Listeners');
  const canAct = roleAllows(f.operator!.role, 'operator');
  const problem = (text: string) => send(reply, 400, listenersPage(f, { query, rows: [], canAct, problem: text }));
  const shared = await sharedFilters(merchants, query, STATES, raw.after, (v) => cursorOf(cursors.open(v, 4)));
  if ('problem' in shared) return problem(shared.problem);
  const { merchantId, after } = shared;

  const rows = await listeners.page({
    merchantId,
    state: query.state as ListenerState | undefined,
    host: query.host,
    after,
    limit: PAGE_SIZE + 1,
  });
  const shown = rows.slice(0, PAGE_SIZE);
  const [ids, rates] = await Promise.all([merchants.publicIdsOf(shown.map((r) => r.merchant_id)), listeners.attemptRates(shown)]);
  const rateOf = new Map(rates.map((r) => [`${r.merchant_id} ${r.origin}`, r]));
  const last = shown[shown.length - 1];
  // What this session's last disable or enable did (a flash, never the address). A Map, not an object: no inherited keys.
  const flash = kit.takeFlash(req, reply);
  const done = flash && NOTICES.get(flash.kind);
  const view: ListenersView = {
    query,
    canAct,
    rows: shown.map((r) => {
      const origin = maskCardLike(r.origin);
      return {
        row: { ...r, origin, host: maskCardLike(r.host), masked: origin !== r.origin, merchant: ids.get(r.merchant_id) ?? r.merchant_id },
        rates: rateOf.get(`${r.merchant_id} ${r.origin}`),
      };
    }),
    next: rows.length > PAGE_SIZE && last ? cursors.seal([last.rank, last.consecutive_failures, last.merchant_id, last.origin]) : undefined,
    notice: done?.(flash?.count ?? 0),
  };
  return send(reply, 200, listenersPage(f, view));
}

/** Disables or enables the listener the form names: checked, role-checked, audited like the CLI, then back to the list. */
async function act(kit: ListenerPages, req: FastifyRequest, reply: FastifyReply, verb: 'disable' | 'enable') {
  const operator = kit.operatorOf(req);
  const body = (req.body ?? {}) as Record<string, unknown>;
  const given = (k: string) => (typeof body[k] === 'string' ? body[k].trim().slice(0, 300) : '');
  const merchant = given('merchant');
  const originGiven = given('origin');
  const action = `listener:${verb}`;
  // The role first: a viewer's forged POST is refused (and recorded) whatever it names.
  if (!(await kit.allowed(req, reply, 'operator', action, merchant || undefined))) return reply;
  const bad = (text: string) => kit.send(reply, 400, problemPage(kit.frame(req, reply, 'Listeners'), 400, text));
  if (!merchant) return bad('merchant is required (the merchant id, 10 digits).');
  if (!originGiven) return bad('origin is required (scheme://host:port).');
  const merchantId = await kit.merchants.resolve(merchant);
  if (!merchantId) return bad('merchant: no merchant has that id (10 digits, as merchant:create printed it).');
  const origin = originOf(originGiven);
  if (!origin) return bad('origin: not an http(s) origin such as https://hooks.example.com:443.');
  const subject = subjectOf(req, operator, action, merchant);
  // As the CLI records it: the merchant and the origin as given (the options it was run with).
  subject.detail = { merchant, origin: originGiven, ...subject.detail };
  const { done, released } = await switchListener(kit, subject, verb, merchantId, origin, operator.id);
  kit.setFlash(req, reply, '/console/listeners', { kind: done, count: done === 'enabled' ? released : undefined });
  const back = new URLSearchParams({ merchant, host: hostOfOrigin(origin) });
  return reply.redirect(`/console/listeners?${back.toString()}`, 303);
}

/** The disable or enable itself, audited: what was done (the notice's kind) and how many held deliveries an enable released. */
async function switchListener(
  kit: ListenerPages,
  subject: AuditSubject,
  verb: 'disable' | 'enable',
  merchantId: string,
  origin: string,
  operatorId: string,
): Promise<{ done: string; released: number }> {
  let done: string;
  let released = 0;
  try {
    done = await kit.audit.run(subject, async () => {
      if (verb === 'disable') {
        if ((await disableListener(kit.listeners, merchantId, origin, operatorId)) === 'already_disabled')
          throw new RefusedError('already-disabled');
        return 'disabled';
      }
      const outcome = await enableListener(kit.listeners, kit.deliveries, kit.queues.delivery, merchantId, origin);
      if (outcome === 'not_disabled') throw new RefusedError('not-disabled');
      released = outcome.released;
      return 'enabled';
    });
  } catch (e) {
    if (!(e instanceof RefusedError)) throw e;
    done = e.message;
  }
  return { done, released };
}

function originOf(given: string): string | undefined {
  try {
    const origin = listenerOrigin(given);
    return ORIGIN.test(origin) ? origin : undefined;
  } catch {
    return undefined;
  }
}

/** The host of an origin (scheme://host:port), as the list's host filter takes it. */
function hostOfOrigin(origin: string): string {
  return origin.replace(/^https?:\/\//, '').replace(/:[0-9]+$/, '');
}

/** The sort key of a sealed page link (see cursorSealer: the origin in it is not readable in the page). */
function cursorOf(key: unknown[] | null): ListenerPageCursor | null {
  if (!key) return null;
  const [rank, failures, merchantId, origin] = key;
  if (rank !== 0 && rank !== 1) return null;
  if (typeof failures !== 'number' || !Number.isInteger(failures) || failures < 0 || failures > MAX_INT) return null;
  if (typeof merchantId !== 'string' || !UUID.test(merchantId) || typeof origin !== 'string' || !ORIGIN.test(origin)) return null;
  return { rank, failures, merchantId, origin };
}
