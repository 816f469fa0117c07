import fastifyCookie from '@fastify/cookie';
import fastifyCsrf from '@fastify/csrf-protection';
import type { NestFastifyApplication } from '@nestjs/platform-fastify';
import { Logger } from '@nestjs/common';
import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest, preHandlerHookHandler } from 'fastify';
import {
  AuditSubject,
  AuditTrail,
  DeliveriesRepository,
  DeliveryConsoleRepository,
  DeliveryPageCursor,
  DELIVERY_STATUSES,
  DeliveryStatus,
  errorClassOf,
  looksLikeOperatorToken,
  maskCardLike,
  MerchantsRepository,
  OperatorRow,
  operatorTokenHash,
  OperatorsRepository,
  RefusedError,
  roleAllows,
} from '@app/persistence';
import { replayDelivery } from '@app/webhooks/delivery';
import { AdminQueues } from '../admin/admin-queues';
import { ApiConfig } from '../config/api.config';
import { clearSession, SESSION_COOKIE, sessionCookieOptions, sessionOperator, sessionValue } from '../operator-session/operator-session';
import { loadConsoleAssets } from './assets';
import { deliveriesPage, detailPage, Frame, overviewPage, problemPage, signInPage } from './views';

const STATUSES: readonly DeliveryStatus[] = DELIVERY_STATUSES;
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
const PAGE_SIZE = 50;
/** A timestamptz as Postgres prints it (the keyset cursor keeps its microseconds). */
const PG_TIME = /^\d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2}(\.\d{1,6})?[+-]\d{2}(:\d{2})?$/;
const ANSWER_BYTES = 1024;

/**
 * Every console answer: scripts and styles from this origin only (no inline script), no framing,
 * forms posting back here only, nothing cached.
 */
const CSP = [
  "default-src 'none'",
  "script-src 'self'",
  "style-src 'self'",
  "img-src 'self' data:",
  "connect-src 'self'",
  "form-action 'self'",
  "frame-ancestors 'none'",
  "base-uri 'none'",
].join('; ');

/** The operator a console request was authenticated as (set by the preHandler). */
const signedIn = new WeakMap<FastifyRequest, OperatorRow>();
const logger = new Logger('Console');

/**
 * The failed-callback console under /console: server-rendered pages (every value HTML-escaped, see
 * html.ts), assets served by the api itself, a session cookie made by the sign-in form (see
 * operator-session.ts), CSRF tokens on every POST (@fastify/csrf-protection, its secret in a
 * signed HttpOnly SameSite=Strict cookie), and a Content-Security-Policy on every answer.
 *
 * Reading needs the viewer role; replaying the operator role, checked by the server (a viewer's
 * POST is refused with 403 and recorded as refused in the audit trail). A replay is audited like
 * the CLI's and /admin's: action webhooks:replay, attempted then its outcome.
 *
 * Registers @fastify/cookie on the whole server (the session also opens bull-board, in admin.setup.ts),
 * so it runs before setUpAdmin.
 */
export async function setUpConsole(app: NestFastifyApplication): Promise<void> {
  const fastify = app.getHttpAdapter().getInstance();
  const config = app.get(ApiConfig);
  await fastify.register(fastifyCookie, { secret: config.consoleSessionKey, hook: 'onRequest' });
  await fastify.register((scope) => registerConsole(scope, app, config), { prefix: '/console' });
}

async function registerConsole(scope: FastifyInstance, app: NestFastifyApplication, config: ApiConfig): Promise<void> {
  const operators = app.get(OperatorsRepository);
  const audit = app.get(AuditTrail);
  const deliveries = app.get(DeliveriesRepository);
  const reads = app.get(DeliveryConsoleRepository);
  const merchants = app.get(MerchantsRepository);
  const queues = app.get(AdminQueues);
  const assets = loadConsoleAssets();
  const production = config.base.nodeEnv === 'production';

  await scope.register(fastifyCsrf, {
    sessionPlugin: '@fastify/cookie',
    cookieKey: 'gw_csrf',
    cookieOpts: { path: '/console', sameSite: 'strict', httpOnly: true, signed: true, secure: production },
  });
  // Forms post application/x-www-form-urlencoded; the rest of the api accepts JSON only (main.ts).
  scope.addContentTypeParser('application/x-www-form-urlencoded', { parseAs: 'string', bodyLimit: 16 * 1024 }, (_req, body, done) => {
    done(null, Object.fromEntries(new URLSearchParams(body as string)));
  });

  scope.addHook('onRequest', (_req, reply, done) => {
    void reply
      .header('content-security-policy', CSP)
      .header('x-content-type-options', 'nosniff')
      .header('referrer-policy', 'no-referrer')
      .header('x-frame-options', 'DENY')
      .header('cache-control', 'no-store');
    done();
  });
  /** Every POST route's token check (after the session check of the preHandler hook below). */
  const csrf: preHandlerHookHandler = (req, reply, done) => scope.csrfProtection(req, reply, done);

  const frame = (req: FastifyRequest, reply: FastifyReply, title: string): Frame => ({
    title,
    operator: signedIn.get(req),
    csrf: reply.generateCsrf(),
  });
  const send = (reply: FastifyReply, status: number, body: string) =>
    reply.code(status).header('content-type', 'text/html; charset=utf-8').send(body);

  // A refused CSRF token (403 from @fastify/csrf-protection) or any other failure: a page, never a stack
  // or a driver's message (which could quote what was sent).
  scope.setErrorHandler((error: FastifyError, req, reply) => {
    const status = error.statusCode && error.statusCode >= 400 && error.statusCode < 500 ? error.statusCode : 500;
    const text =
      status === 403
        ? 'The form was stale or not sent from the console (CSRF check failed): reload the page and try again.'
        : status === 500
          ? 'Something failed on the server; see the api log for this request id.'
          : 'The request was not valid.';
    // The class only: a driver's message could quote what was sent.
    if (status === 500) logger.error(`console request ${req.id} failed: ${errorClassOf(error)}`);
    return send(
      reply,
      status,
      problemPage({ title: String(status), operator: signedIn.get(req), csrf: reply.generateCsrf() }, status, text),
    );
  });

  // Sign-in required for everything but the sign-in form and the assets (each POST route checks its CSRF token after this).
  scope.addHook('preHandler', async (req, reply) => {
    const route = req.routeOptions?.url ?? '';
    if (route.startsWith('/console/assets/') || route === '/console/sign-in') return;
    const operator = await sessionOperator(scope, operators, req);
    if (!operator) {
      clearSession(reply);
      if (req.method === 'GET' || req.method === 'HEAD') return reply.redirect('/console/sign-in', 303);
      return send(
        reply,
        401,
        problemPage({ title: 'Signed out', csrf: reply.generateCsrf() }, 401, 'Your session has ended: sign in again.'),
      );
    }
    signedIn.set(req, operator);
    await operators.touch(operator.id);
  });

  // An unknown /console path is a console page too (signed in, with the same headers).
  scope.setNotFoundHandler((req, reply) => send(reply, 404, problemPage(frame(req, reply, 'Not found'), 404, 'No such page.')));

  scope.get('/assets/:file', (req, reply) => {
    const asset = assets.get((req.params as { file: string }).file);
    if (!asset) return reply.code(404).send();
    return reply.header('content-type', asset.type).header('cache-control', 'public, max-age=300').send(asset.body);
  });

  scope.get('/', (_req, reply) => reply.redirect('/console/overview', 303));

  scope.get('/sign-in', async (req, reply) => {
    if (await sessionOperator(scope, operators, req)) return reply.redirect('/console/overview', 303);
    return send(reply, 200, signInPage(reply.generateCsrf()));
  });

  scope.post('/sign-in', { preHandler: csrf }, async (req, reply) => {
    const given = (req.body as Record<string, unknown> | undefined)?.token;
    const token = typeof given === 'string' ? given.trim() : '';
    const operator = looksLikeOperatorToken(token) ? await operators.findByTokenHash(operatorTokenHash(token)) : undefined;
    if (!operator || operator.revoked_at) {
      // As on /admin: an unknown token is anyone on the network and is not recorded in the trail;
      // a revoked operator's attempt is theirs to answer for.
      if (operator) await audit.refuse(subjectOf(req, operator, 'console:sign-in'), 'revoked operator token');
      return send(reply, 401, signInPage(reply.generateCsrf(), 'That token is not an active operator token.'));
    }
    // Attempted then ok, as every recorded action (an outcome points at its attempt).
    await audit.run(subjectOf(req, operator, 'console:sign-in'), () => Promise.resolve());
    void reply.setCookie(SESSION_COOKIE, sessionValue(operator.id), sessionCookieOptions(req, production));
    return reply.redirect('/console/overview', 303);
  });

  scope.post('/sign-out', { preHandler: csrf }, (_req, reply) => {
    clearSession(reply);
    return reply.redirect('/console/sign-in', 303);
  });

  scope.get('/overview', async (req, reply) => {
    const o = await reads.overview();
    const ids = await merchants.publicIdsOf(o.failingListeners.map((l) => l.merchant_id));
    const failing = o.failingListeners.map((l) => ({ ...l, merchant: ids.get(l.merchant_id) ?? l.merchant_id }));
    return send(reply, 200, overviewPage(frame(req, reply, 'Overview'), { ...o, failing }));
  });

  scope.get('/deliveries', async (req, reply) => {
    const raw = req.query as Record<string, unknown>;
    const query: Record<string, string> = {};
    for (const k of ['merchant', 'state', 'host', 'transaction', 'event', 'from', 'to']) {
      const v = raw[k];
      if (typeof v === 'string' && v.trim() !== '') query[k] = v.trim().slice(0, 256);
    }
    const f = frame(req, reply, 'Deliveries');
    const problem = (text: string) => send(reply, 400, deliveriesPage(f, { query, rows: [], problem: text }));
    const merchantId = query.merchant === undefined ? undefined : await merchants.resolve(query.merchant);
    if (query.merchant !== undefined && !merchantId) return problem('No merchant has that id (10 digits, as merchant:create printed it).');
    if (query.state !== undefined && !STATUSES.includes(query.state as DeliveryStatus))
      return problem(`State must be one of ${STATUSES.join(', ')}.`);
    if (query.transaction !== undefined && !UUID.test(query.transaction)) return problem('A transaction id is a UUID.');
    const from = query.from === undefined ? undefined : utc(query.from);
    const to = query.to === undefined ? undefined : utc(query.to);
    if (from === null || to === null) return problem('From and to must be times such as 2026-11-25T17:00 (UTC).');
    const after = typeof raw.after === 'string' ? cursorOf(raw.after) : undefined;
    if (after === null) return problem('That page link is not valid; start from the first page.');
    const rows = await reads.list({
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
        next: rows.length > PAGE_SIZE && last ? cursorText({ createdAt: last.cursor, id: last.id }) : undefined,
      }),
    );
  });

  scope.get('/deliveries/:id', async (req, reply) => {
    const id = (req.params as { id: string }).id;
    const d = UUID.test(id) ? await deliveries.find(id) : undefined;
    const f = frame(req, reply, 'Delivery');
    if (!d) return send(reply, 404, problemPage(f, 404, 'No such delivery.'));
    const attempts = (await deliveries.attemptsOf(d.id)) as {
      attempt: number;
      started_at: Date;
      duration_ms: number;
      http_status: number | null;
      error_class: string | null;
      response_body: string | null;
    }[];
    const ids = await merchants.publicIdsOf([d.merchant_id]);
    const { body, merchant_id, ...rest } = d;
    const flag = (req.query as Record<string, unknown>).replay;
    const notice =
      flag === 'queued'
        ? { ok: true, text: 'Replay queued: the state below changes once the listener has answered (reload to see it).' }
        : flag === 'refused'
          ? { ok: false, text: 'Only a failed or blocked delivery can be replayed.' }
          : undefined;
    return send(
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
        attempts: attempts.map((a) => ({
          ...a,
          // Masked before it is cut: a card number straddling the cut must be seen whole to be masked.
          answer: a.response_body === null ? null : firstBytes(maskCardLike(a.response_body), ANSWER_BYTES),
        })),
        canReplay: roleAllows(f.operator!.role, 'operator'),
        notice,
      }),
    );
  });

  scope.post('/deliveries/:id/replay', { preHandler: csrf }, async (req, reply) => {
    const operator = signedIn.get(req)!;
    const id = (req.params as { id: string }).id;
    if (!UUID.test(id)) return send(reply, 404, problemPage(frame(req, reply, 'Delivery'), 404, 'No such delivery.'));
    const subject = subjectOf(req, operator, 'webhooks:replay', id);
    if (!roleAllows(operator.role, 'operator')) {
      await audit.refuse(subject, `role ${operator.role} below operator`);
      return send(
        reply,
        403,
        problemPage(
          frame(req, reply, 'Refused'),
          403,
          `Operator ${operator.name} (${operator.role}) may not replay: it needs the operator role.`,
        ),
      );
    }
    try {
      await audit.run(subject, async () => {
        const outcome = await replayDelivery(deliveries, queues.delivery, id);
        if (outcome !== 'queued') throw new RefusedError(outcome);
      });
    } catch (e) {
      if (!(e instanceof RefusedError)) throw e;
      if (e.message === 'not_found') return send(reply, 404, problemPage(frame(req, reply, 'Delivery'), 404, 'No such delivery.'));
      return reply.redirect(`/console/deliveries/${id.toLowerCase()}?replay=refused`, 303);
    }
    return reply.redirect(`/console/deliveries/${id.toLowerCase()}?replay=queued`, 303);
  });
}

function subjectOf(req: FastifyRequest, operator: OperatorRow, action: string, target?: string): AuditSubject {
  return {
    operator: { id: operator.id, name: operator.name },
    action,
    target,
    origin: `http ${req.ip}`,
    detail: { method: req.method, route: req.routeOptions?.url ?? null, via: 'console' },
  };
}

/** A time from the filter form (datetime-local, read as UTC) or an ISO 8601 time; null when neither. */
function utc(v: string): Date | null {
  const iso = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(:\d{2}(\.\d{1,6})?)?$/.test(v) ? `${v}Z` : v;
  const d = new Date(iso);
  return inTimestampRange(d) ? d : null;
}

/** Years 1970 to 9999: what a filter can mean, and inside what Postgres's timestamptz holds. */
function inTimestampRange(d: Date): boolean {
  const year = d.getUTCFullYear();
  return !Number.isNaN(d.getTime()) && year >= 1970 && year <= 9999;
}

function cursorText(c: DeliveryPageCursor): string {
  return Buffer.from(JSON.stringify([c.createdAt, c.id])).toString('base64url');
}

function cursorOf(v: string): DeliveryPageCursor | null {
  try {
    const parsed: unknown = JSON.parse(Buffer.from(v, 'base64url').toString('utf8'));
    if (!Array.isArray(parsed) || parsed.length !== 2) return null;
    const [createdAt, id] = parsed as unknown[];
    if (typeof createdAt !== 'string' || typeof id !== 'string' || !UUID.test(id) || !PG_TIME.test(createdAt)) return null;
    // The shape is not enough (2026-99-99 has it): the time must be one Postgres reads.
    if (!inTimestampRange(new Date(createdAt.replace(' ', 'T').replace(/([+-]\d{2})$/, '$1:00')))) return null;
    return { createdAt, id };
  } catch {
    return null;
  }
}

/** The longest prefix of `s` that fits in `bytes` UTF-8 bytes, never cutting a character. */
function firstBytes(s: string, bytes: number): string {
  const buf = Buffer.from(s, 'utf8');
  if (buf.length <= bytes) return s;
  let end = bytes;
  while (end > 0 && (buf[end] & 0xc0) === 0x80) end--;
  return `${buf.subarray(0, end).toString('utf8')}…`;
}
