import {
  DeliveriesRepository,
  DeliveryConsoleRepository,
  DeliveryPageCursor,
  DELIVERY_STATUSES,
  DeliveryStatus,
  ListenersRepository,
  MerchantsRepository,
} from '@app/persistence';
import { maskCardLike, RefusedError, roleAllows } from '@app/operators';
import { replayDelivery } from '@app/webhooks/delivery';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { AdminQueues } from '../admin/admin-queues';
import { ConsoleKit, DeliveryPagesKit, subjectOf } from './console-kit';
import { problemPage } from './layout';
import { cursorKey, cursorText, filtersOf, sharedFilters, UUID } from './list-query';
import { deliveriesPage, detailPage, overviewPage } from './views';

const STATUSES: readonly DeliveryStatus[] = DELIVERY_STATUSES;
const PAGE_SIZE = 50;
/** A timestamptz as Postgres prints it (the keyset cursor keeps its microseconds). */
const PG_TIME = /^(\d{4})-(\d{2})-(\d{2}) (\d{2}):(\d{2}):(\d{2})(?:\.\d{1,6})?[+-](\d{2})(?::(\d{2}))?$/;
const ANSWER_BYTES = 1024;

/**
 * The console's overview and delivery pages. Reading needs the viewer role; replaying the operator
 * role, checked by the server (a viewer's POST is refused with 403 and recorded as refused in the
 * audit trail). A replay is audited like the CLI's and /admin's: action webhooks:replay, attempted
 * then its outcome.
 */
export function registerDeliveryRoutes(kit: ConsoleKit): void {
  const reads = kit.app.get(DeliveryConsoleRepository);
  const merchants = kit.app.get(MerchantsRepository);

  kit.scope.get('/overview', async (req, reply) => {
    const o = await reads.overview();
    const ids = await merchants.publicIdsOf(o.failingListeners.map((l) => l.merchant_id));
    // Listener hosts and URLs masked as on every other page (a host could hold a card-like digit run).
    const failing = o.failingListeners.map((l) => ({
      ...l,
      host: maskCardLike(l.host),
      merchant: ids.get(l.merchant_id) ?? l.merchant_id,
    }));
    const oldestOpen = o.oldestOpen && { ...o.oldestOpen, url: maskCardLike(o.oldestOpen.url) };
    return kit.send(reply, 200, overviewPage(kit.frame(req, reply, 'Overview'), { ...o, oldestOpen, failing }));
  });

  registerDeliveryPages({
    ...kit,
    base: '/console',
    merchantScope: () => undefined,
    canReplay: (req) => roleAllows(kit.operatorOf(req).role, 'operator'),
    traceLink: (traceId) => kit.config.traceUrlTemplate.replaceAll('{traceId}', traceId) || undefined,
    replayer: async (req, reply, id) =>
      (await kit.allowed(req, reply, 'operator', 'webhooks:replay', id))
        ? subjectOf(req, kit.operatorOf(req), 'webhooks:replay', id)
        : undefined,
  });
}

/**
 * The deliveries list (keyset pages), a delivery's detail and its replay, for the console (every
 * merchant) and the merchant portal (kit.merchantScope: one merchant, in SQL: a filter cannot widen
 * it, and another merchant's delivery answers 404 exactly as a missing one).
 */
export function registerDeliveryPages(kit: DeliveryPagesKit): void {
  const { scope, app, csrf } = kit;
  const pages: DeliveryPages = {
    ...kit,
    deliveries: app.get(DeliveriesRepository),
    reads: app.get(DeliveryConsoleRepository),
    merchants: app.get(MerchantsRepository),
    listeners: app.get(ListenersRepository),
    queues: app.get(AdminQueues),
  };
  scope.get('/deliveries', (req, reply) => deliveriesList(pages, req, reply));
  scope.get('/deliveries/:id', (req, reply) => deliveryDetail(pages, req, reply));
  scope.post('/deliveries/:id/replay', { preHandler: csrf }, (req, reply) => replay(pages, req, reply));
}

/** A DeliveryPagesKit and the repositories and queue its pages read and replay through. */
interface DeliveryPages extends DeliveryPagesKit {
  deliveries: DeliveriesRepository;
  reads: DeliveryConsoleRepository;
  merchants: MerchantsRepository;
  listeners: ListenersRepository;
  queues: AdminQueues;
}

function notFound(kit: DeliveryPages, req: FastifyRequest, reply: FastifyReply) {
  return kit.send(reply, 404, problemPage(kit.frame(req, reply, 'Delivery'), 404, 'No such delivery.'));
}

async function deliveriesList(kit: DeliveryPages, req: FastifyRequest, reply: FastifyReply) {
  const { send, merchants } = kit;
  const raw = req.query as Record<string, unknown>;
  const scoped = kit.merchantScope(req);
  // In the portal there is no merchant filter: the scope is the link's merchant, whatever the query says.
  const query = filtersOf(raw, [...(scoped ? [] : ['merchant']), 'state', 'host', 'transaction', 'event', 'from', 'to']);
  const f = kit.frame(req, reply, 'Deliveries');
  const problem = (text: string) => send(reply, 400, deliveriesPage(f, { query, rows: [], problem: text }));
  const shared = await sharedFilters(merchants, query, STATUSES, raw.after, cursorOf);
  if ('problem' in shared) return problem(shared.problem);
  const merchantId = scoped ?? shared.merchantId;
  const { after } = shared;
  if (query.transaction !== undefined && !UUID.test(query.transaction)) return problem('A transaction id is a UUID.');
  const from = query.from === undefined ? undefined : utc(query.from);
  const to = query.to === undefined ? undefined : utc(query.to);
  if (from === null || to === null) return problem('From and to must be times such as 2026-11-25T17:00 (UTC).');
  const rows = await kit.reads.list({
    merchantId,
    status: query.state as DeliveryStatus | undefined,
    host: query.host,
    transactionId: query.transaction?.toLowerCase(),
    event: query.event,
    from,
    to,
    after,
    limit: PAGE_SIZE + 1,
  });
  const page = rows.slice(0, PAGE_SIZE);
  const ids = await merchants.publicIdsOf(page.map((r) => r.merchant_id));
  const last = page[page.length - 1];
  return send(
    reply,
    200,
    deliveriesPage(f, {
      query,
      rows: page.map((r) => ({ ...r, url: maskCardLike(r.url), merchant: ids.get(r.merchant_id) ?? r.merchant_id })),
      next: rows.length > PAGE_SIZE && last ? cursorText([last.cursor, last.id]) : undefined,
    }),
  );
}

async function deliveryDetail(kit: DeliveryPages, req: FastifyRequest, reply: FastifyReply) {
  const { deliveries } = kit;
  const id = (req.params as { id: string }).id;
  const d = UUID.test(id) ? await deliveries.find(id, kit.merchantScope(req)) : undefined;
  if (!d) return notFound(kit, req, reply);
  const f = kit.frame(req, reply, 'Delivery');
  const attempts = (await deliveries.attemptsOf(d.id)) as {
    attempt: number;
    started_at: Date;
    duration_ms: number;
    http_status: number | null;
    error_class: string | null;
    response_body: string | null;
    trace_id: string | null;
  }[];
  const ids = await kit.merchants.publicIdsOf([d.merchant_id]);
  const { body, merchant_id, ...rest } = d;
  // What this session's replay did (a flash left by its POST), never the address.
  const notice = replayNotice(kit.takeFlash(req, reply)?.kind);
  return kit.send(
    reply,
    200,
    detailPage(f, {
      delivery: {
        ...rest,
        url: maskCardLike(d.url),
        last_error: d.last_error && maskCardLike(d.last_error),
        merchant: ids.get(merchant_id) ?? merchant_id,
      },
      body: maskCardLike(body),
      attempts: attempts.map(({ trace_id, ...a }) => ({
        ...a,
        trace: kit.traceLink && trace_id ? { id: trace_id, href: kit.traceLink(trace_id) } : undefined,
        // Masked before it is cut: a card number straddling the cut must be seen whole to be masked.
        answer: a.response_body === null ? null : firstBytes(maskCardLike(a.response_body), ANSWER_BYTES),
      })),
      canReplay: kit.canReplay(req),
      showTraces: kit.traceLink !== undefined,
      notice,
    }),
  );
}

/** The detail page's notice after a replay: queued, held behind a disabled listener, or refused. */
function replayNotice(flag: string | undefined): { ok: boolean; text: string } | undefined {
  return flag === 'queued'
    ? { ok: true, text: 'Replay queued: the state below changes once the listener has answered (reload to see it).' }
    : flag === 'held'
      ? {
          ok: true,
          text: 'Replay queued, but its listener is disabled: the delivery is held, not attempted, until the listener is enabled (Listeners page).',
        }
      : flag === 'refused'
        ? { ok: false, text: 'Only a failed or blocked delivery can be replayed.' }
        : undefined;
}

async function replay(kit: DeliveryPages, req: FastifyRequest, reply: FastifyReply) {
  const { deliveries, base } = kit;
  const id = (req.params as { id: string }).id;
  if (!UUID.test(id)) return notFound(kit, req, reply);
  const subject = await kit.replayer(req, reply, id);
  if (!subject) return reply;
  try {
    await kit.audit.run(subject, async () => {
      const outcome = await replayDelivery(deliveries, kit.queues.delivery, id, kit.merchantScope(req));
      if (outcome !== 'queued') throw new RefusedError(outcome);
    });
  } catch (e) {
    if (!(e instanceof RefusedError)) throw e;
    if (e.message === 'not_found') return notFound(kit, req, reply);
    kit.setFlash(req, reply, `${base}/deliveries/${id.toLowerCase()}`, { kind: 'refused' });
    return reply.redirect(`${base}/deliveries/${id.toLowerCase()}`, 303);
  }
  // A replay to a disabled listener is held by its first claim, not attempted: the notice says so.
  const d = await deliveries.find(id);
  const held = d?.origin ? (await kit.listeners.find(d.merchant_id, d.origin))?.state === 'disabled' : false;
  kit.setFlash(req, reply, `${base}/deliveries/${id.toLowerCase()}`, { kind: held ? 'held' : 'queued' });
  return reply.redirect(`${base}/deliveries/${id.toLowerCase()}`, 303);
}

/** A time from the filter form (datetime-local, read as UTC) or an ISO 8601 time; null when neither. */
export function utc(v: string): Date | null {
  const iso = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(:\d{2}(\.\d{1,6})?)?$/.test(v) ? `${v}Z` : v;
  const d = new Date(iso);
  return inTimestampRange(d) ? d : null;
}

/** Years 1970 to 9999: what a filter can mean, and inside what Postgres's timestamptz holds. */
function inTimestampRange(d: Date): boolean {
  const year = d.getUTCFullYear();
  return !Number.isNaN(d.getTime()) && year >= 1970 && year <= 9999;
}

/**
 * A timestamptz as Postgres prints it and reads it back: the shape is not enough (2026-02-30 and
 * an offset of +20 have it, and Postgres refuses both), so each field must be in its range.
 */
export function isPgTime(v: string): boolean {
  const m = PG_TIME.exec(v);
  if (!m) return false;
  const [y, mo, d, h, mi, s, offsetH, offsetM] = [m[1], m[2], m[3], m[4], m[5], m[6], m[7], m[8] ?? '0'].map(Number);
  const t = new Date(Date.UTC(y, mo - 1, d, h, mi, s));
  const same =
    t.getUTCFullYear() === y &&
    t.getUTCMonth() === mo - 1 &&
    t.getUTCDate() === d &&
    t.getUTCHours() === h &&
    t.getUTCMinutes() === mi &&
    t.getUTCSeconds() === s;
  return same && y >= 1970 && y <= 9999 && offsetH <= 15 && offsetM <= 59;
}

function cursorOf(v: string): DeliveryPageCursor | null {
  const key = cursorKey(v, 2);
  if (!key) return null;
  const [createdAt, id] = key;
  if (typeof createdAt !== 'string' || typeof id !== 'string' || !UUID.test(id) || !isPgTime(createdAt)) return null;
  return { createdAt, id };
}

/** The longest prefix of `s` that fits in `bytes` UTF-8 bytes, never cutting a character. */
function firstBytes(s: string, bytes: number): string {
  const buf = Buffer.from(s, 'utf8');
  if (buf.length <= bytes) return s;
  let end = bytes;
  while (end > 0 && (buf[end] & 0xc0) === 0x80) end--;
  return `${buf.subarray(0, end).toString('utf8')}…`;
}
