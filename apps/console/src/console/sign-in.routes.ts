import { randomBytes } from 'node:crypto';
import type { FastifyInstance, FastifyReply, FastifyRequest, preHandlerHookHandler } from 'fastify';
import { OperatorsRepository } from '@app/persistence';
import { AuditTrail, looksLikeOperatorToken, operatorTokenHash } from '@app/operators';
import { AuthLimits } from '@app/http';
import {
  clearSession,
  secureSession,
  sessionCookieName,
  sessionCookieOptions,
  SESSION_TTL_S,
  sessionIdOf,
  sessionOf,
  SessionReader,
} from '../operator-session/operator-session';
import { subjectOf } from './console-kit';
import { sendPage as send } from './page-scope';
import { csrfHolds, csrfRefused, mintCsrf, pageCookie } from './page-tokens';
import { signInPage } from './views';

/**
 * The sign-in form's pre-session cookie (a random value its CSRF token is bound to; no session
 * exists yet): `__Host-gw_csrf` (Path=/) when Secure, `gw_csrf` (Path=/console) over plain http.
 * Accepted by the sign-in POST only, and removed once signed in.
 */
const PRE_SESSION_COOKIE = 'gw_csrf';

/** What the sign-in and sign-out routes use: the scope and its session reader, the page-token key, and who may sign in. */
export interface SignInKit {
  scope: FastifyInstance;
  reader: SessionReader;
  key: Buffer;
  operators: OperatorsRepository;
  audit: AuditTrail;
  failures: AuthLimits;
  /** Sign-out's token check: a token of the session it ends. */
  csrf: preHandlerHookHandler;
}

/** The sign-in form, its POST (an operator token in, a session cookie out) and sign-out. */
export function registerSignInRoutes(kit: SignInKit): void {
  const { scope, reader } = kit;
  scope.get('/sign-in', async (req, reply) => {
    if (await sessionOf(reader, req)) return reply.redirect('/console/overview', 303);
    return send(reply, 200, signInPage(signInToken(kit, req, reply)));
  });
  scope.post('/sign-in', { preHandler: signInCsrf(kit) }, (req, reply) => signIn(kit, req, reply));
  // Ends the session on the server (a copied cookie is refused from now on, and so are its tokens) and removes the cookie.
  scope.post('/sign-out', { preHandler: kit.csrf }, async (req, reply) => {
    const id = sessionIdOf(scope, req, reader.production);
    if (id) await reader.sessions.end(id);
    clearSession(reply, req, reader.production);
    return reply.redirect('/console/sign-in', 303);
  });
}

async function signIn(kit: SignInKit, req: FastifyRequest, reply: FastifyReply) {
  const { scope, audit, failures } = kit;
  const { sessions, production } = kit.reader;
  const blocked = failures.blocked('console', req.ip);
  if (blocked !== undefined) return tooMany(kit, req, reply, blocked);
  const given = (req.body as Record<string, unknown> | undefined)?.token;
  const token = typeof given === 'string' ? given.trim() : '';
  const operator = looksLikeOperatorToken(token) ? await kit.operators.findByTokenHash(operatorTokenHash(token)) : undefined;
  if (!operator || operator.revoked_at) {
    // As on /admin: an unknown token is anyone on the network and is not recorded in the trail;
    // a revoked operator's attempt is theirs to answer for.
    if (operator) await audit.refuse(subjectOf(req, operator, 'console:sign-in'), 'revoked operator token');
    const retryAfterS = await failures.failed('console', req.ip);
    if (retryAfterS !== undefined) return tooMany(kit, req, reply, retryAfterS);
    return send(reply, 401, signInPage(signInToken(kit, req, reply), 'That token is not an active operator token.'));
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
  const pre = preSessionCookie(kit, req);
  void reply.clearCookie(pre.name, pre.options);
  return reply.redirect('/console/overview', 303);
}

/** Past AUTH_FAILURE_LIMIT failed sign-ins from an address: 429 until the window ends, whatever token it sends. */
function tooMany(kit: SignInKit, req: FastifyRequest, reply: FastifyReply, retryAfterS: number) {
  return send(
    reply.header('retry-after', String(retryAfterS)),
    429,
    signInPage(signInToken(kit, req, reply), `Too many failed sign-ins from this address: try again in ${retryAfterS} s.`),
  );
}

function preSessionCookie(kit: SignInKit, req: FastifyRequest) {
  return pageCookie(PRE_SESSION_COOKIE, '/console', secureSession(req, kit.reader.production));
}

/** The sign-in form's token, bound to this browser's pre-session cookie (set here when it has none). */
function signInToken(kit: SignInKit, req: FastifyRequest, reply: FastifyReply): string {
  const c = preSessionCookie(kit, req);
  let value = req.cookies[c.name];
  if (!value || !/^[A-Za-z0-9_-]{22}$/.test(value)) {
    value = randomBytes(16).toString('base64url');
    void reply.setCookie(c.name, value, c.options);
  }
  return mintCsrf(kit.key, 'pre-session', value);
}

/** The sign-in POST's check: a token of the sign-in form, for this browser's pre-session cookie (login CSRF). */
function signInCsrf(kit: SignInKit): preHandlerHookHandler {
  return (req, _reply, done) => {
    const given = (req.body as Record<string, unknown> | undefined)?._csrf;
    done(csrfHolds(kit.key, 'pre-session', req.cookies[preSessionCookie(kit, req).name], given) ? undefined : csrfRefused());
  };
}
