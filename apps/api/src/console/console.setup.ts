import fastifyCookie from '@fastify/cookie';
import type { NestFastifyApplication } from '@nestjs/platform-fastify';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import {
  AuditTrail,
  ConsoleSessionsRepository,
  looksLikeOperatorToken,
  OperatorRow,
  operatorTokenHash,
  OperatorsRepository,
  roleAllows,
} from '@app/persistence';
import { ApiConfig } from '../config/api.config';
import {
  clearSession,
  secureSession,
  sessionCookieName,
  sessionCookieOptions,
  SESSION_TTL_S,
  sessionIdOf,
  sessionOf,
  SessionReader,
  touchOperator,
} from '../operator-session/operator-session';
import { loadConsoleAssets } from './assets';
import { ConsoleKit, refusePage, subjectOf } from './console-kit';
import { registerDeliveryRoutes } from './deliveries.routes';
import { registerRecoverRoutes } from './recover.routes';
import { Frame, problemPage } from './layout';
import { pageCsrf, sendPage, setUpPageScope } from './page-scope';
import { registerMerchantRoutes } from './merchants.routes';
import { registerListenerRoutes } from './listeners.routes';
import { registerRebillRoutes } from './rebills.routes';
import { signInPage } from './views';

/** The operator a console request was authenticated as (set by the preHandler). */
const signedIn = new WeakMap<FastifyRequest, OperatorRow>();
/** The cookie holding the CSRF secret (signed, HttpOnly, Path=/console). */
const CSRF_COOKIE = 'gw_csrf';

/**
 * The failed-callback console under /console: server-rendered pages (every value HTML-escaped, see
 * html.ts), assets served by the api itself, a session cookie made by the sign-in form (see
 * operator-session.ts: a server-side session, ended at sign-out), CSRF tokens on every POST
 * (@fastify/csrf-protection, its secret in a signed HttpOnly SameSite=Strict cookie, issued anew at
 * each sign-in and removed at sign-out), and a Content-Security-Policy on every answer.
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
  const sessions = app.get(ConsoleSessionsRepository);
  const audit = app.get(AuditTrail);
  const assets = loadConsoleAssets();
  const production = config.base.nodeEnv === 'production';
  const reader: SessionReader = { fastify: scope, sessions, production };
  const csrfCookie = { path: '/console', sameSite: 'strict' as const, httpOnly: true, signed: true, secure: production };

  /** Every POST route's token check (after the session check of the preHandler hook below). */
  const csrf = await pageCsrf(scope, CSRF_COOKIE, production);

  const frame = (req: FastifyRequest, reply: FastifyReply, title: string): Frame => ({
    title,
    operator: signedIn.get(req),
    csrf: reply.generateCsrf(),
  });
  const send = sendPage;
  setUpPageScope(scope, assets, frame);

  // Sign-in required for everything but the sign-in form and the assets (each POST route checks its CSRF token after this).
  scope.addHook('preHandler', async (req, reply) => {
    const route = req.routeOptions?.url ?? '';
    if (route.startsWith('/console/assets/') || route === '/console/sign-in') return;
    const operator = (await sessionOf(reader, req))?.operator;
    if (!operator) {
      clearSession(reply, req, production);
      if (req.method === 'GET' || req.method === 'HEAD') return reply.redirect('/console/sign-in', 303);
      return send(
        reply,
        401,
        problemPage({ title: 'Signed out', csrf: reply.generateCsrf() }, 401, 'Your session has ended: sign in again.'),
      );
    }
    signedIn.set(req, operator);
    await touchOperator(operators, operator.id);
  });

  scope.get('/', (_req, reply) => reply.redirect('/console/overview', 303));

  scope.get('/sign-in', async (req, reply) => {
    if (await sessionOf(reader, req)) return reply.redirect('/console/overview', 303);
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
    // Attempted then ok (or failed, if the session could not be opened), as every recorded action.
    const previous = sessionIdOf(scope, req, production);
    const session = await audit.run(subjectOf(req, operator, 'console:sign-in'), async () => {
      // A session this browser held before is ended, not left open beside the new one.
      if (previous) await sessions.end(previous);
      return sessions.open(operator.id, SESSION_TTL_S, req.ip);
    });
    const secure = secureSession(req, production);
    void reply.setCookie(sessionCookieName(secure), session, sessionCookieOptions(secure));
    // A fresh CSRF secret for the new session: one planted or read before sign-in is worth nothing after it.
    delete req.cookies[CSRF_COOKIE];
    reply.generateCsrf();
    return reply.redirect('/console/overview', 303);
  });

  // Ends the session on the server (a copied cookie is refused from now on) and removes both cookies.
  scope.post('/sign-out', { preHandler: csrf }, async (req, reply) => {
    const id = sessionIdOf(scope, req, production);
    if (id) await sessions.end(id);
    clearSession(reply, req, production);
    void reply.clearCookie(CSRF_COOKIE, csrfCookie);
    return reply.redirect('/console/sign-in', 303);
  });

  const kit: ConsoleKit = {
    scope,
    app,
    config,
    audit,
    csrf,
    frame,
    send,
    operatorOf: (req) => {
      const operator = signedIn.get(req);
      if (!operator) throw new Error('console route reached without a session');
      return operator;
    },
    allowed: async (req, reply, role, action, target) => {
      const operator = kit.operatorOf(req);
      if (roleAllows(operator.role, role)) return true;
      await audit.refuse(subjectOf(req, operator, action, target), `role ${operator.role} below ${role}`);
      const verb = action.split(':').pop() ?? action;
      await refusePage(kit, req, reply, operator, role, verb);
      return false;
    },
  };
  registerDeliveryRoutes(kit);
  registerMerchantRoutes(kit);
  registerRecoverRoutes(kit);
  registerListenerRoutes(kit);
  registerRebillRoutes(kit);
}
