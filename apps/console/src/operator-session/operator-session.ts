import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { ConsoleSessionsRepository, OperatorRow, OperatorsRepository } from '@app/persistence';

/** The console's session cookie over plain http (development only). */
export const SESSION_COOKIE = 'gw_console';
/**
 * The same cookie when it is Secure (production, or https): the __Host- prefix makes the browser
 * accept it only if Secure, Path=/ and without Domain, so a sibling subdomain cannot plant or
 * overwrite it.
 */
export const SECURE_SESSION_COOKIE = '__Host-gw_console';
/** How long a sign-in lasts: a working day. */
export const SESSION_TTL_S = 8 * 3600;

type CookieReader = Pick<FastifyInstance, 'parseCookie' | 'unsignCookie'>;

/** Whether this request's session cookie is (to be) Secure: always in production, otherwise over https. */
export const secureSession = (req: FastifyRequest, production: boolean): boolean => production || req.protocol === 'https';

/** The cookie's name for the request's mode: only that name is read (no downgrade to the plain one in production). */
export const sessionCookieName = (secure: boolean): string => (secure ? SECURE_SESSION_COOKIE : SESSION_COOKIE);

/**
 * Cookie attributes: HttpOnly, SameSite=Strict, Path=/ (bull-board too), no Domain, Secure in
 * production or over https. The value is a session id signed (HMAC-SHA256) by @fastify/cookie; it
 * carries no token: the operator token is only ever sent once, to the sign-in form.
 */
export function sessionCookieOptions(secure: boolean) {
  return { httpOnly: true, sameSite: 'strict' as const, path: '/', secure, signed: true, maxAge: SESSION_TTL_S };
}

/** The session id a request's cookie of its mode carries, if the cookie is there and its signature holds. */
export function sessionIdOf(fastify: CookieReader, req: FastifyRequest, production: boolean): string | undefined {
  const raw = fastify.parseCookie(req.headers.cookie ?? '')[sessionCookieName(secureSession(req, production))];
  if (!raw) return undefined;
  const unsigned = fastify.unsignCookie(raw);
  return unsigned.valid && unsigned.value ? unsigned.value : undefined;
}

/** What the console and /admin need to read a session. */
export interface SessionReader {
  fastify: CookieReader;
  sessions: ConsoleSessionsRepository;
  production: boolean;
}

/**
 * The session a request's cookie names, if it is open (not signed out, not ended by
 * operator:revoke, not expired) and its operator is not revoked: the session and the operator are
 * read in one statement on every request, so a sign-out or a revocation holds from the next
 * request on, whoever copied the cookie.
 */
export async function sessionOf(r: SessionReader, req: FastifyRequest): Promise<{ id: string; operator: OperatorRow } | undefined> {
  const id = sessionIdOf(r.fastify, req, r.production);
  if (!id) return undefined;
  const open = await r.sessions.find(id);
  if (!open || open.operator.revoked_at) return undefined;
  if (Date.now() - open.lastSeenAt.getTime() > 60_000) await r.sessions.touch(id);
  return { id, operator: open.operator };
}

/** Removes the session cookie of the request's mode from the browser (the server-side session is ended by the caller). */
export function clearSession(reply: FastifyReply, req: FastifyRequest, production: boolean): void {
  const secure = secureSession(req, production);
  // The same attributes it was set with: a browser keeps a __Host- cookie whose removal is not Secure with Path=/.
  void reply.clearCookie(sessionCookieName(secure), { httpOnly: true, sameSite: 'strict', path: '/', secure });
}

/** last_used_at is written at most once a minute per operator (per console process). */
const TOUCH_EVERY_MS = 60_000;
const touchedAt = new Map<string, number>();

/**
 * Records that the operator was active: the console's page loads and bull-board's polling would
 * otherwise each run an UPDATE. Between two writes no statement runs at all; the UPDATE itself
 * also skips a row written under a minute ago (by another replica).
 */
export async function touchOperator(operators: OperatorsRepository, id: string, nowMs = Date.now()): Promise<void> {
  if (nowMs - (touchedAt.get(id) ?? 0) < TOUCH_EVERY_MS) return;
  touchedAt.set(id, nowMs);
  await operators.touch(id);
}
