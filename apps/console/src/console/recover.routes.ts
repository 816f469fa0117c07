import type { FastifyReply, FastifyRequest } from 'fastify';
import { MerchantsRepository, RecoverableStatus, RecoveriesRepository, RecoveryRow, RecoveryScope } from '@app/persistence';
import { RefusedError, roleAllows } from '@app/operators';
import { originNamed } from '@app/webhooks';
import { queueStartedRecovery } from '@app/webhooks/delivery';
import { AdminQueues } from '../admin/admin-queues';
import { ConsoleKit, subjectOf } from './console-kit';
import { utc } from './deliveries.routes';
import { problemPage } from './layout';
import { previewPage, RecoverForm, recoverPage, recoveryPage } from './recover.views';

const RECENT = 20;
const REFRESH_S = 2;

/**
 * The Recover page: "replay every failed delivery of merchant M (optionally one listener) since
 * T". The form first answers the count (GET /console/recover/preview, nothing replayed); Start
 * (operator role, audited as webhooks:recover) creates a recovery the notifier runs a page at a
 * time, whose page shows its progress (reloading itself) and a Cancel button (operator role,
 * audited as webhooks:recover-cancel).
 */
export function registerRecoverRoutes(kit: ConsoleKit): void {
  const { scope, app, csrf } = kit;
  const pages: RecoverPages = {
    ...kit,
    recoveries: app.get(RecoveriesRepository),
    merchants: app.get(MerchantsRepository),
    queues: app.get(AdminQueues),
  };
  scope.get('/recover', (req, reply) => listPage(pages, req, reply, 200, formOf(req.query)));
  scope.get('/recover/preview', (req, reply) => preview(pages, req, reply));
  scope.post('/recover', { preHandler: csrf }, (req, reply) => start(pages, req, reply));
  scope.get('/recover/:id', (req, reply) => recovery(pages, req, reply));
  scope.get('/recover/:id/progress', (req, reply) => progress(pages, req, reply));
  scope.post('/recover/:id/cancel', { preHandler: csrf }, (req, reply) => cancel(pages, req, reply));
}

/** A ConsoleKit and what the Recover pages read and start recoveries through. */
interface RecoverPages extends ConsoleKit {
  recoveries: RecoveriesRepository;
  merchants: MerchantsRepository;
  queues: AdminQueues;
}

/** The form's fields, trimmed and cut. */
function formOf(raw: unknown): RecoverForm {
  const r = (raw ?? {}) as Record<string, unknown>;
  const form: RecoverForm = {};
  for (const k of ['merchant', 'origin', 'since', 'blocked'] as const) {
    const v = r[k];
    if (typeof v === 'string' && v.trim() !== '') form[k] = v.trim().slice(0, 256);
  }
  return form;
}

/** The recovery the form names, or the problem with it (naming the field). */
async function scopeOf(kit: RecoverPages, form: RecoverForm): Promise<{ scope: RecoveryScope; merchant: string } | { problem: string }> {
  const { merchants, recoveries } = kit;
  if (!form.merchant) return { problem: 'Merchant id is required.' };
  const merchantId = await merchants.resolve(form.merchant);
  if (!merchantId) return { problem: 'Merchant id: no merchant has that id (10 digits, as merchant:create printed it).' };
  if (!form.since) return { problem: 'Since is required (a UTC time such as 2026-11-25T17:00).' };
  const since = utc(form.since);
  if (!since) return { problem: 'Since must be a time such as 2026-11-25T17:00 (UTC).' };
  let origin: string | undefined;
  if (form.origin) {
    const named = originNamed(form.origin, await recoveries.listenerOrigins(merchantId));
    if ('problem' in named) return { problem: `Listener: ${named.problem}.` };
    origin = named.origin;
  }
  const states: RecoverableStatus[] = form.blocked === '1' ? ['failed', 'blocked'] : ['failed'];
  return { scope: { merchantId, origin, since, states }, merchant: (await merchants.publicIdOf(merchantId)) ?? merchantId };
}

async function withMerchants(kit: RecoverPages, rows: RecoveryRow[]) {
  const ids = await kit.merchants.publicIdsOf(rows.map((r) => r.merchant_id));
  return rows.map((r) => ({ ...r, merchant: ids.get(r.merchant_id) ?? r.merchant_id }));
}

async function listPage(kit: RecoverPages, req: FastifyRequest, reply: FastifyReply, status: number, query: RecoverForm, problem?: string) {
  return kit.send(
    reply,
    status,
    recoverPage(kit.frame(req, reply, 'Recover'), {
      query,
      recent: await withMerchants(kit, await kit.recoveries.recent(RECENT)),
      problem,
    }),
  );
}

function notFound(kit: RecoverPages, req: FastifyRequest, reply: FastifyReply) {
  return kit.send(reply, 404, problemPage(kit.frame(req, reply, 'Recovery'), 404, 'No such recovery.'));
}

/** The count the form's recovery would replay; nothing replayed. */
async function preview(kit: RecoverPages, req: FastifyRequest, reply: FastifyReply) {
  const query = formOf(req.query);
  const named = await scopeOf(kit, query);
  if ('problem' in named) return listPage(kit, req, reply, 400, query, named.problem);
  const { scope: s, merchant } = named;
  const count = await kit.recoveries.count(s);
  return kit.send(
    reply,
    200,
    previewPage(kit.frame(req, reply, 'Recover'), {
      query,
      merchant,
      origin: s.origin,
      since: s.since,
      blocked: s.states.includes('blocked'),
      count,
    }),
  );
}

/** Starts the recovery (operator role, audited as webhooks:recover) and queues it for the notifier. */
async function start(kit: RecoverPages, req: FastifyRequest, reply: FastifyReply) {
  const { recoveries } = kit;
  const operator = kit.operatorOf(req);
  const form = formOf(req.body);
  if (!(await kit.allowed(req, reply, 'operator', 'webhooks:recover', form.merchant))) return reply;
  const named = await scopeOf(kit, form);
  if ('problem' in named) return listPage(kit, req, reply, 400, form, named.problem);
  const { scope: s, merchant } = named;
  const subject = subjectOf(req, operator, 'webhooks:recover', merchant);
  const detail = { ...subject.detail, merchant, origin: s.origin ?? null, since: s.since.toISOString(), states: s.states };
  let started: RecoveryRow | undefined;
  await kit.audit.run(
    { ...subject, detail: { ...detail, count: await recoveries.count(s) } },
    async () => {
      started = await recoveries.start(s, operator.id);
    },
    () => ({ target: started?.id ?? merchant, detail: { ...detail, count: started?.total ?? null, recovery: started?.id ?? null } }),
  );
  // Started (committed) whatever the queue answers: when Redis is down the notifier's sweep queues it.
  await queueStartedRecovery(kit.queues.recovery, started!.id);
  return reply.redirect(`/console/recover/${started!.id}`, 303);
}

async function recovery(kit: RecoverPages, req: FastifyRequest, reply: FastifyReply) {
  const r = await kit.recoveries.find((req.params as { id: string }).id);
  if (!r) return notFound(kit, req, reply);
  const f = { ...kit.frame(req, reply, 'Recovery'), refreshS: r.state === 'running' ? REFRESH_S : undefined };
  const [view] = await withMerchants(kit, [r]);
  return kit.send(reply, 200, recoveryPage(f, view, roleAllows(f.operator!.role, 'operator')));
}

async function progress(kit: RecoverPages, req: FastifyRequest, reply: FastifyReply) {
  const r = await kit.recoveries.find((req.params as { id: string }).id);
  if (!r) return reply.code(404).send({ error: 'no such recovery' });
  const { id, state, total, replayed, skipped, finished_at } = r;
  return reply.send({ id, state, total, replayed, skipped, finishedAt: finished_at });
}

/** Cancels a running recovery (operator role, audited as webhooks:recover-cancel); one not running is left as it is. */
async function cancel(kit: RecoverPages, req: FastifyRequest, reply: FastifyReply) {
  const { recoveries } = kit;
  const operator = kit.operatorOf(req);
  const found = await recoveries.find((req.params as { id: string }).id);
  if (!found) return notFound(kit, req, reply);
  if (!(await kit.allowed(req, reply, 'operator', 'webhooks:recover-cancel', found.id))) return reply;
  try {
    await kit.audit.run(subjectOf(req, operator, 'webhooks:recover-cancel', found.id), async () => {
      const cancelled = await recoveries.cancel(found.id);
      if (!cancelled) throw new RefusedError(`not running (${found.state})`);
    });
  } catch (e) {
    if (!(e instanceof RefusedError)) throw e;
  }
  return reply.redirect(`/console/recover/${found.id}`, 303);
}
