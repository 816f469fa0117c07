import fastifyCookie from '@fastify/cookie';
import type { NestFastifyApplication } from '@nestjs/platform-fastify';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { ConsoleSessionsRepository, OperatorRow, OperatorsRepository } from '@app/persistence';
import { AuditTrail, roleAllows } from '@app/operators';
import { ConsoleConfig } from '../config/console.config';
import { AuthLimits } from '@app/http';
import { clearSession, secureSession, sessionOf, SessionReader, touchOperator } from '../operator-session/operator-session';
import { loadConsoleAssets } from './assets';
import { ConsoleKit, PageKit, refusePage, subjectOf } from './console-kit';
import { registerDeliveryRoutes } from './deliveries.routes';
import { registerRecoverRoutes } from './recover.routes';
import { Frame, problemPage } from './layout';
import { sendPage, setUpPageScope } from './page-scope';
import { pageTokenKey, pageTokens } from './page-tokens';
import { registerMerchantRoutes } from './merchants.routes';
import { registerListenerRoutes } from './listeners.routes';
import { registerRebillRoutes } from './rebills.routes';
import { registerSignInRoutes } from './sign-in.routes';

/** The operator a console request was authenticated as (set by the preHandler). */
const signedIn = new WeakMap<FastifyRequest, OperatorRow>();
/** The id of the session it was authenticated by: what its CSRF tokens and flash notices are bound to. */
const sessionIds = new WeakMap<FastifyRequest, string>();
/** The flash notice's cookie (page-tokens.ts): `__Host-gw_flash` when Secure. */
const FLASH_COOKIE = 'gw_flash';

/**
 * The failed-callback console under /console: server-rendered pages (every value HTML-escaped, see
 * html.ts), assets served by the console app itself, a session cookie made by the sign-in form (see
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
  const config = app.get(ConsoleConfig);
  await fastify.register(fastifyCookie, { secret: config.consoleSessionKey, hook: 'onRequest' });
  await fastify.register(
    (scope, _opts, done) => {
      registerConsole(scope, app, config);
      done();
    },
    { prefix: '/console' },
  );
}

function registerConsole(scope: FastifyInstance, app: NestFastifyApplication, config: ConsoleConfig): void {
  const operators = app.get(OperatorsRepository);
  const audit = app.get(AuditTrail);
  const production = config.base.nodeEnv === 'production';
  const reader: SessionReader = { fastify: scope, sessions: app.get(ConsoleSessionsRepository), production };
  const key = pageTokenKey(config.consoleSessionKey, 'gateway console page tokens v1');
  const tokens = pageTokens({
    key,
    scopePath: '/console',
    flashCookie: FLASH_COOKIE,
    secure: (req) => secureSession(req, production),
    bindingOf: (req) => sessionIds.get(req),
  });
  const frame = (req: FastifyRequest, _reply: FastifyReply, title: string): Frame => ({
    title,
    operator: signedIn.get(req),
    csrf: tokens.csrfToken(req),
  });
  setUpPageScope(scope, loadConsoleAssets(), frame);
  // Sign-in required for everything but the sign-in form and the assets (each POST route checks its CSRF token after this).
  scope.addHook('preHandler', async (req, reply) => requireSession(reader, operators, req, reply));
  scope.get('/', (_req, reply) => reply.redirect('/console/overview', 303));
  // Every POST route's token check but the sign-in's (after the session check of the preHandler hook above).
  const csrf = tokens.csrf;
  registerSignInRoutes({ scope, reader, key, operators, audit, failures: app.get(AuthLimits), csrf });
  const kit = consoleKit({
    scope,
    app,
    config,
    audit,
    csrf,
    setFlash: tokens.setFlash,
    takeFlash: tokens.takeFlash,
    frame,
    send: sendPage,
  });
  registerDeliveryRoutes(kit);
  registerMerchantRoutes(kit);
  registerRecoverRoutes(kit);
  registerListenerRoutes(kit);
  registerRebillRoutes(kit);
}

/** The session check: the signed-in operator (and the session) remembered for the request, else back to sign-in. */
async function requireSession(reader: SessionReader, operators: OperatorsRepository, req: FastifyRequest, reply: FastifyReply) {
  const route = req.routeOptions?.url ?? '';
  if (route.startsWith('/console/assets/') || route === '/console/sign-in') return;
  const session = await sessionOf(reader, req);
  const operator = session?.operator;
  if (!session || !operator) {
    clearSession(reply, req, reader.production);
    if (req.method === 'GET' || req.method === 'HEAD') return reply.redirect('/console/sign-in', 303);
    return sendPage(reply, 401, problemPage({ title: 'Signed out', csrf: '' }, 401, 'Your session has ended: sign in again.'));
  }
  signedIn.set(req, operator);
  sessionIds.set(req, session.id);
  await touchOperator(operators, operator.id);
}

/** The console's page kit: the signed-in operator of a request, and the role check that refuses (audited) below a role. */
function consoleKit(pages: PageKit & { config: ConsoleConfig }): ConsoleKit {
  const kit: ConsoleKit = {
    ...pages,
    operatorOf: (req) => {
      const operator = signedIn.get(req);
      if (!operator) throw new Error('console route reached without a session');
      return operator;
    },
    allowed: async (req, reply, role, action, target) => {
      const operator = kit.operatorOf(req);
      if (roleAllows(operator.role, role)) return true;
      await pages.audit.refuse(subjectOf(req, operator, action, target), `role ${operator.role} below ${role}`);
      const verb = action.split(':').pop() ?? action;
      await refusePage(kit, req, reply, operator, role, verb);
      return false;
    },
  };
  return kit;
}
