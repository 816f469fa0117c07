import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { OperatorRow, OperatorsRepository } from '@app/persistence';

/** The console's session cookie: the operator's id and an expiry, signed (HMAC-SHA256) by @fastify/cookie. */
export const SESSION_COOKIE = 'gw_console';
/** How long a sign-in lasts: a working day. */
export const SESSION_TTL_S = 8 * 3600;

/**
 * The cookie's value before signing: `<operator id>.<expiry, epoch seconds>`. It carries no
 * token: the operator token is only ever sent once, to the sign-in form, and is never stored in
 * the browser. The operator row is read on every request, so revoking the operator (operator:revoke)
 * ends their sessions from the next request on.
 */
export function sessionValue(operatorId: string, nowMs = Date.now()): string {
  return `${operatorId}.${Math.floor(nowMs / 1000) + SESSION_TTL_S}`;
}

/** Cookie attributes: HttpOnly, SameSite=Strict, Path=/ (bull-board too), Secure in production or over https. */
export function sessionCookieOptions(req: FastifyRequest, production: boolean) {
  return {
    httpOnly: true,
    sameSite: 'strict' as const,
    path: '/',
    secure: production || req.protocol === 'https',
    signed: true,
    maxAge: SESSION_TTL_S,
  };
}

/** The active (not revoked) operator a request's valid, unexpired session cookie names, if any. */
export async function sessionOperator(
  fastify: Pick<FastifyInstance, 'parseCookie' | 'unsignCookie'>,
  operators: OperatorsRepository,
  req: FastifyRequest,
  nowMs = Date.now(),
): Promise<OperatorRow | undefined> {
  const raw = fastify.parseCookie(req.headers.cookie ?? '')[SESSION_COOKIE];
  if (!raw) return undefined;
  const unsigned = fastify.unsignCookie(raw);
  if (!unsigned.valid || !unsigned.value) return undefined;
  const m = /^([0-9a-f-]{36})\.(\d{1,12})$/.exec(unsigned.value);
  if (!m || Number(m[2]) * 1000 <= nowMs) return undefined;
  const operator = await operators.findById(m[1]);
  return operator && !operator.revoked_at ? operator : undefined;
}

export function clearSession(reply: FastifyReply): void {
  void reply.clearCookie(SESSION_COOKIE, { path: '/' });
}

/** last_used_at is written at most once a minute per operator (per api process). */
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
