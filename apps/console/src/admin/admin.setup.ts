import { createBullBoard } from '@bull-board/api';
import { FastifyAdapter } from '@bull-board/fastify';
import type { NestFastifyApplication } from '@nestjs/platform-fastify';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { ErrorCodes } from '@app/contracts';
import { ConsoleSessionsRepository, OperatorRow, OperatorsRepository } from '@app/persistence';
import { AuditSubject, AuditTrail, looksLikeOperatorToken, OperatorRole, operatorTokenHash, roleAllows } from '@app/operators';
import { AuthLimits, unavailable, wireError } from '@app/http';
import { ConsoleConfig } from '../config/console.config';
import { sessionOf, SessionReader, touchOperator } from '../operator-session/operator-session';
import { AdminQueues, CARD_BEARING_QUEUES, RETRYABLE_QUEUES } from './admin-queues';
import { RedactingBullMQAdapter } from './redacting-adapter';

const REDACTED = { redacted: 'card-bearing queue: job data is not shown' };
const UNAUTHORIZED = { status: { code: '401', message: 'Unauthorized' } };
const TOO_MANY = { status: { code: '429', message: 'Too Many Requests' } };
const READS = new Set(['GET', 'HEAD']);
/**
 * Every /admin answer (bull-board's pages are the ones it matters for): scripts from here only
 * (bull-board's own bundle, under /admin/queues/static), no framing, nothing from elsewhere.
 * bull-board's UI sets style= attributes and a <style> element (its loading screen, its
 * components), hence 'unsafe-inline' for styles only; its page sets <base href>, hence base-uri 'self'.
 */
const ADMIN_CSP = [
  "default-src 'none'",
  "script-src 'self'",
  "style-src 'self' 'unsafe-inline'",
  "img-src 'self' data:",
  "font-src 'self' data:",
  "connect-src 'self'",
  "form-action 'self'",
  "frame-ancestors 'none'",
  "base-uri 'self'",
].join('; ');
/** bull-board's page links fonts from Google: removed, so the operator's browser asks no third party (system fonts instead). */
const THIRD_PARTY_STYLESHEET = /<link\b[^>]*\bhref="https:\/\/fonts\.googleapis\.com\/[^"]*"[^>]*>/g;

/** The attempt a non-GET admin request was audited under, for its outcome once the answer is known. */
const attempts = new WeakMap<FastifyRequest, { subject: AuditSubject; attemptId: string }>();

/**
 * The operator surface: every /admin path wants `Authorization: Bearer <operator token>`, the
 * token of an operator (operator:create), looked up by its hash on every request, so a revoked
 * token is refused from the next request on. Unknown or revoked: a bare 401 that says nothing
 * else (past AUTH_FAILURE_LIMIT such answers to an address in a window: 429 with Retry-After for
 * everything it sends until the window ends). Reading (GET) needs the viewer role; anything else
 * (a replay, a dashboard retry) the operator role, else 403 with the wire error body (code 011).
 *
 * Every non-GET request of a known operator is audited, refused or not (one with no known token
 * is only in the request log): a refusal as one `refused` event; an
 * allowed one as `attempted` before the handler runs (if that cannot be written: 503, nothing
 * done) and its outcome (`ok`, or `failed` with the HTTP status as its class) before the answer
 * leaves (if that cannot be written: 503 instead of the answer).
 *
 * A browser signed in to the console (/console/sign-in) may read here with its session cookie
 * instead of the header (GET and HEAD only); with neither it is sent to the sign-in page.
 *
 * bull-board at /admin/queues shows every queue, the data of card-bearing ones redacted, failure
 * messages and stacks redacted (redacting-adapter.ts), retries only where a retry is safe
 * (deliveries, settlement), under a Content-Security-Policy.
 */
export async function setUpAdmin(app: NestFastifyApplication): Promise<void> {
  const fastify = app.getHttpAdapter().getInstance();
  const gate: AdminGate = {
    operators: app.get(OperatorsRepository),
    audit: app.get(AuditTrail),
    failures: app.get(AuthLimits),
    reader: {
      fastify,
      sessions: app.get(ConsoleSessionsRepository),
      production: app.get(ConsoleConfig).base.nodeEnv === 'production',
    },
  };
  fastify.addHook('onRequest', async (req, reply) => guard(gate, req, reply));
  fastify.addHook('onSend', async (req, reply, payload) => recordOutcome(gate.audit, req, reply, payload));
  await mountQueueBoard(app, fastify);
}

/** What the /admin check reads: the operators, the audit trail, the failed-token counts and the console's sessions. */
interface AdminGate {
  operators: OperatorsRepository;
  audit: AuditTrail;
  failures: AuthLimits;
  reader: SessionReader;
}

/** Every /admin request: the security headers, then the address's failure window, then the operator's token and role. */
async function guard(gate: AdminGate, req: FastifyRequest, reply: FastifyReply) {
  if (!isAdminRequest(req)) return;
  // Answers here can hold what listeners answered and job data: never kept in a browser's cache.
  void reply
    .header('cache-control', 'no-store')
    .header('content-security-policy', ADMIN_CSP)
    .header('x-content-type-options', 'nosniff')
    .header('referrer-policy', 'no-referrer')
    .header('x-frame-options', 'DENY');
  // Past AUTH_FAILURE_LIMIT failed tokens from an address: 429 until the window ends, whatever it sends.
  const blocked = gate.failures.blocked('admin', req.ip);
  if (blocked !== undefined) return reply.code(429).header('retry-after', String(blocked)).send(TOO_MANY);
  const subject = subjectOf(req);
  try {
    return await admit(gate, req, reply, subject);
  } catch {
    // The operator store or the audit trail is unreachable: nothing runs unchecked or unrecorded.
    const wire = unavailable();
    return reply.code(wire.httpStatus).send(wire.body);
  }
}

/** The operator behind the request, checked for its role and the dashboard's one action; a write is audited as attempted. */
async function admit(gate: AdminGate, req: FastifyRequest, reply: FastifyReply, subject: AuditSubject) {
  const audited = !READS.has(req.method);
  // No Authorization header: a browser. The console's session opens reading (bull-board's
  // pages and its API's GETs); actions still need the Bearer token (the session cookie is
  // SameSite=Strict, but bull-board's own requests carry no CSRF token). Only bull-board's:
  // the JSON endpoints beside it answer unmasked bodies, for the Bearer holder who asked.
  const bySession = req.headers.authorization === undefined && !audited && (req.routeOptions?.url ?? '').startsWith('/admin/queues');
  const operator = bySession ? (await sessionOf(gate.reader, req))?.operator : await operatorByToken(gate.operators, req);
  if (!operator && bySession && /text\/html/.test(req.headers.accept ?? '')) return reply.redirect('/console/sign-in', 303);
  if (!operator || operator.revoked_at) return refuseToken(gate, req, reply, subject, audited ? operator : undefined);
  subject.operator = { id: operator.id, name: operator.name };
  const needs: OperatorRole = audited ? 'operator' : 'viewer';
  if (!roleAllows(operator.role, needs)) {
    await gate.audit.refuse(subject, `role ${operator.role} below ${needs}`);
    const wire = wireError(
      403,
      ErrorCodes.OperatorRoleRefused,
      `Operator ${operator.name} (${operator.role}) may not do this: it needs the ${needs} role.`,
    );
    return reply.code(wire.httpStatus).send(wire.body);
  }
  // Of the dashboard's actions only retries are allowed: adding, editing, emptying or pausing a
  // queue by hand could forge a settlement event or drop work.
  const route = req.routeOptions?.url ?? '';
  if (route.startsWith('/admin/queues/api/') && audited && !/\/retry(\/:[A-Za-z]+)?$/.test(route)) {
    await gate.audit.refuse(subject, 'not a retry: the dashboard only retries');
    return reply.code(405).send({ status: { code: '405', message: 'Only retries are allowed from the dashboard' } });
  }
  await touchOperator(gate.operators, operator.id);
  if (audited) attempts.set(req, { subject, attemptId: await gate.audit.append(subject, 'attempted') });
}

/** The operator whose token the Authorization header carries, if it looks like one and is known. */
async function operatorByToken(operators: OperatorsRepository, req: FastifyRequest): Promise<OperatorRow | undefined> {
  const given = /^Bearer (.+)$/.exec(req.headers.authorization ?? '')?.[1];
  return looksLikeOperatorToken(given) ? await operators.findByTokenHash(operatorTokenHash(given)) : undefined;
}

/**
 * An unknown or revoked token: 401, or 429 once the address is past its failures. `revoked` is the
 * revoked operator of a write (a refusal that is theirs to answer for), else undefined.
 */
async function refuseToken(gate: AdminGate, req: FastifyRequest, reply: FastifyReply, subject: AuditSubject, revoked?: OperatorRow) {
  // A revoked operator is someone: the refusal is theirs to answer for. A request with no
  // known token is anyone on the network, and recording each one would let anyone fill the
  // trail; those are in the request log (status 401) instead.
  if (revoked) await gate.audit.refuse({ ...subject, operator: { id: revoked.id, name: revoked.name } }, 'revoked operator token');
  // Counted per address (a flood of guesses is one audit row per window: AuthLimits).
  const retryAfterS = await gate.failures.failed('admin', req.ip);
  if (retryAfterS !== undefined) return reply.code(429).header('retry-after', String(retryAfterS)).send(TOO_MANY);
  return reply.code(401).header('www-authenticate', 'Bearer').send(UNAUTHORIZED);
}

/** Before an /admin answer leaves: bull-board's third-party stylesheet removed, and an audited write's outcome recorded. */
async function recordOutcome(audit: AuditTrail, req: FastifyRequest, reply: FastifyReply, payload: unknown) {
  if (typeof payload === 'string' && isAdminRequest(req) && /^text\/html/.test(String(reply.getHeader('content-type') ?? '')))
    payload = payload.replace(THIRD_PARTY_STYLESHEET, '');
  const attempt = attempts.get(req);
  if (!attempt) return payload;
  attempts.delete(req);
  const ok = reply.statusCode < 400;
  try {
    await audit.append(attempt.subject, ok ? 'ok' : 'failed', {
      attemptId: attempt.attemptId,
      errorClass: ok ? undefined : `http_${reply.statusCode}`,
    });
    return payload;
  } catch {
    const wire = unavailable('The action ran but its outcome could not be recorded in the audit trail; check it before retrying.');
    reply.code(wire.httpStatus).header('content-type', 'application/json; charset=utf-8');
    return JSON.stringify(wire.body);
  }
}

/** bull-board at /admin/queues: every queue, retries only where a retry is safe, card-bearing job data redacted. */
async function mountQueueBoard(app: NestFastifyApplication, fastify: FastifyInstance): Promise<void> {
  const queues = app.get(AdminQueues);
  const board = new FastifyAdapter();
  board.setBasePath('/admin/queues');
  createBullBoard({
    queues: queues.all.map((q) => {
      const operable = RETRYABLE_QUEUES.includes(q.name);
      const cardBearing = CARD_BEARING_QUEUES.includes(q.name);
      // Only deliveries and settlement may be retried from the dashboard; the rest is read-only.
      const adapter = new RedactingBullMQAdapter(q as never, { allowRetries: operable, readOnlyMode: !operable }, cardBearing);
      if (cardBearing) {
        adapter.setFormatter('data', () => REDACTED);
        adapter.setFormatter('returnValue', () => REDACTED);
      }
      return adapter;
    }),
    serverAdapter: board,
  });
  await fastify.register(board.registerPlugin() as never, { prefix: '/admin/queues' });
}

/** What the audit trail calls an admin request: the CLI's name for the same action where there is one. */
function subjectOf(req: FastifyRequest): AuditSubject {
  const route = req.routeOptions?.url;
  const params = (req.params ?? {}) as Record<string, string>;
  const action = !route
    ? `http ${req.method} (no route)`
    : /\/deliveries\/:id\/replay$/.test(route)
      ? 'webhooks:replay'
      : /\/events\/dead\/replay$/.test(route)
        ? 'events:replay-dead'
        : /\/retry(\/:[A-Za-z]+)?$/.test(route)
          ? 'queues:retry'
          : `http ${req.method} ${route}`;
  const target =
    Object.values(params)
      .filter((v) => typeof v === 'string')
      .join('/') || undefined;
  // The query names what some actions act on (a dead-letter replay's event and limit).
  const query = typeof req.query === 'object' && req.query !== null ? (req.query as Record<string, unknown>) : {};
  const named = Object.fromEntries(Object.entries(query).filter(([k, v]) => ['event', 'limit'].includes(k) && typeof v === 'string'));
  return { action, target, origin: `http ${req.ip}`, detail: { method: req.method, route: route ?? null, ...params, ...named } };
}

/**
 * Whether a request is for /admin, judged on the route Fastify matched (the decoded path: the raw
 * URL may be `/%61dmin/…` or an absolute-form `http://host/admin/…`) and, for unmatched ones, on
 * the decoded path too, so no spelling of the prefix gets past the token check.
 */
function isAdminRequest(req: FastifyRequest): boolean {
  if ((req.routeOptions?.url ?? '').startsWith('/admin')) return true;
  let path = req.url;
  try {
    path = new URL(req.url, 'http://x').pathname;
    path = decodeURIComponent(path);
  } catch {
    // undecodable: judged as written
  }
  return /^\/+admin(\/|$)/i.test(path);
}
