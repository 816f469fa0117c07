import fastifyCookie from '@fastify/cookie';
import fastifyCsrf from '@fastify/csrf-protection';
import type { NestFastifyApplication } from '@nestjs/platform-fastify';
import { Logger } from '@nestjs/common';
import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest, preHandlerHookHandler } from 'fastify';
import {
  AuditTrail,
  errorClassOf,
  looksLikeOperatorToken,
  OperatorRow,
  operatorTokenHash,
  OperatorsRepository,
  roleAllows,
} from '@app/persistence';
import { ApiConfig } from '../config/api.config';
import {
  clearSession,
  SESSION_COOKIE,
  sessionCookieOptions,
  sessionOperator,
  sessionValue,
  touchOperator,
} from '../operator-session/operator-session';
import { loadConsoleAssets } from './assets';
import { ConsoleKit, refusePage, subjectOf } from './console-kit';
import { registerDeliveryRoutes } from './deliveries.routes';
import { Frame, problemPage } from './layout';
import { signInPage } from './views';

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
    await touchOperator(operators, operator.id);
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
}
