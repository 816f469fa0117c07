import { randomBytes } from 'node:crypto';
import fastifyCookie from '@fastify/cookie';
import type { NestFastifyApplication } from '@nestjs/platform-fastify';
import type { FastifyInstance, FastifyReply, FastifyRequest, preHandlerHookHandler } from 'fastify';
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
import { AuthLimits } from '../rate-limit/auth-limits.service';
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
import { sendPage, setUpPageScope } from './page-scope';
import { csrfHolds, csrfRefused, mintCsrf, pageCookie, pageTokenKey, pageTokens } from './page-tokens';
import { registerMerchantRoutes } from './merchants.routes';
import { registerListenerRoutes } from './listeners.routes';
import { registerRebillRoutes } from './rebills.routes';
import { signInPage } from './views';

/** The operator a console request was authenticated as (set by the preHandler). */
const signedIn = new WeakMap<FastifyRequest, OperatorRow>();
/** The id of the session it was authenticated by: what its CSRF tokens and flash notices are bound to. */
const sessionIds = new WeakMap<FastifyRequest, string>();
/**
 * The sign-in form's pre-session cookie (a random value its CSRF token is bound to; no session
 * exists yet): `__Host-gw_csrf` (Path=/) when Secure, `gw_csrf` (Path=/console) over plain http.
 * Accepted by the sign-in POST only, and removed once signed in.
 */
const PRE_SESSION_COOKIE = 'gw_csrf';
/** The flash notice's cookie (page-tokens.ts): `__Host-gw_flash` when Secure. */
const FLASH_COOKIE = 'gw_flash';

/**
 * The failed-callback console under /console: server-rendered pages (every value HTML-escaped, see
 * html.ts), assets served by the api itself, a session cookie made by the sign-in form (see
 * operator-session.ts: a server-side session, ended at sign-out), CSRF tokens on every POST bound
 * to that session (page-tokens.ts: an HMAC of the session id; the sign-in form's bound to a
 * pre-session cookie instead, and accepted there only), notices from a flash bound to the session,
 * and a Content-Security-Policy on every answer.
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
  await fastify.register(
    (scope, _opts, done) => {
      registerConsole(scope, app, config);
      done();
    },
    { prefix: '/console' },
  );
}

function registerConsole(scope: FastifyInstance, app: NestFastifyApplication, config: ApiConfig): void {
  const operators = app.get(OperatorsRepository);
  const sessions = app.get(ConsoleSessionsRepository);
  const audit = app.get(AuditTrail);
  const failures = app.get(AuthLimits);
  const assets = loadConsoleAssets();
  const production = config.base.nodeEnv === 'production';
  const reader: SessionReader = { fastify: scope, sessions, production };
  const key = pageTokenKey(config.consoleSessionKey, 'gateway console page tokens v1');
  const tokens = pageTokens({
    key,
    scopePath: '/console',
    flashCookie: FLASH_COOKIE,
    secure: (req) => secureSession(req, production),
    bindingOf: (req) => sessionIds.get(req),
  });
  /** Every POST route's token check but the sign-in's (after the session check of the preHandler hook below). */
  const csrf = tokens.csrf;

  const preSessionCookie = (req: FastifyRequest) => pageCookie(PRE_SESSION_COOKIE, '/console', secureSession(req, production));
  /** The sign-in form's token, bound to this browser's pre-session cookie (set here when it has none). */
  const signInToken = (req: FastifyRequest, reply: FastifyReply): string => {
    const c = preSessionCookie(req);
    let value = req.cookies[c.name];
    if (!value || !/^[A-Za-z0-9_-]{22}$/.test(value)) {
      value = randomBytes(16).toString('base64url');
      void reply.setCookie(c.name, value, c.options);
    }
    return mintCsrf(key, 'pre-session', value);
  };
  /** The sign-in POST's check: a token of the sign-in form, for this browser's pre-session cookie (login CSRF). */
  const signInCsrf: preHandlerHookHandler = (req, _reply, done) => {
    const given = (req.body as Record<string, unknown> | undefined)?._csrf;
    done(csrfHolds(key, 'pre-session', req.cookies[preSessionCookie(req).name], given) ? undefined : csrfRefused());
  };

  const frame = (req: FastifyRequest, _reply: FastifyReply, title: string): Frame => ({
    title,
    operator: signedIn.get(req),
    csrf: tokens.csrfToken(req),
  });
  const send = sendPage;
  setUpPageScope(scope, assets, frame);

  // Sign-in required for everything but the sign-in form and the assets (each POST route checks its CSRF token after this).
  scope.addHook('preHandler', async (req, reply) => {
    const route = req.routeOptions?.url ?? '';
    if (route.startsWith('/console/assets/') || route === '/console/sign-in') return;
    const session = await sessionOf(reader, req);
    const operator = session?.operator;
    if (!session || !operator) {
      clearSession(reply, req, production);
      if (req.method === 'GET' || req.method === 'HEAD') return reply.redirect('/console/sign-in', 303);
      return send(reply, 401, problemPage({ title: 'Signed out', csrf: '' }, 401, 'Your session has ended: sign in again.'));
    }
    signedIn.set(req, operator);
    sessionIds.set(req, session.id);
    await touchOperator(operators, operator.id);
  });

  scope.get('/', (_req, reply) => reply.redirect('/console/overview', 303));

  scope.get('/sign-in', async (req, reply) => {
    if (await sessionOf(reader, req)) return reply.redirect('/console/overview', 303);
    return send(reply, 200, signInPage(signInToken(req, reply)));
  });

  /** Past AUTH_FAILURE_LIMIT failed sign-ins from an address: 429 until the window ends, whatever token it sends. */
  const tooMany = (req: FastifyRequest, reply: FastifyReply, retryAfterS: number) =>
    send(
      reply.header('retry-after', String(retryAfterS)),
      429,
      signInPage(signInToken(req, reply), `Too many failed sign-ins from this address: try again in ${retryAfterS} s.`),
    );

  scope.post('/sign-in', { preHandler: signInCsrf }, async (req, reply) => {
    const blocked = failures.blocked('console', req.ip);
    if (blocked !== undefined) return tooMany(req, reply, blocked);
    const given = (req.body as Record<string, unknown> | undefined)?.token;
    const token = typeof given === 'string' ? given.trim() : '';
    const operator = looksLikeOperatorToken(token) ? await operators.findByTokenHash(operatorTokenHash(token)) : undefined;
    if (!operator || operator.revoked_at) {
      // As on /admin: an unknown token is anyone on the network and is not recorded in the trail;
      // a revoked operator's attempt is theirs to answer for.
      if (operator) await audit.refuse(subjectOf(req, operator, 'console:sign-in'), 'revoked operator token');
      const retryAfterS = await failures.failed('console', req.ip);
      if (retryAfterS !== undefined) return tooMany(req, reply, retryAfterS);
      return send(reply, 401, signInPage(signInToken(req, reply), 'That token is not an active operator token.'));
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
    // From here on the tokens are the session's (an HMAC of its id): the pre-session cookie and its
    // tokens, planted or read before sign-in, are worth nothing after it.
    const pre = preSessionCookie(req);
    void reply.clearCookie(pre.name, pre.options);
    return reply.redirect('/console/overview', 303);
  });

  // Ends the session on the server (a copied cookie is refused from now on, and so are its tokens) and removes the cookie.
  scope.post('/sign-out', { preHandler: csrf }, async (req, reply) => {
    const id = sessionIdOf(scope, req, production);
    if (id) await sessions.end(id);
    clearSession(reply, req, production);
    return reply.redirect('/console/sign-in', 303);
  });

  const kit: ConsoleKit = {
    scope,
    app,
    config,
    audit,
    csrf,
    setFlash: tokens.setFlash,
    takeFlash: tokens.takeFlash,
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
