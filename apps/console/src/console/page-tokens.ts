import { createHmac, hkdfSync, randomBytes, timingSafeEqual } from 'node:crypto';
import type { FastifyReply, FastifyRequest, preHandlerHookHandler } from 'fastify';

/**
 * CSRF tokens and flash notices of a page scope (the console, the portal), both bound to the
 * scope's session: what the session preHandler found (the console session's id, the portal
 * link's id), never something a cookie alone carries.
 *
 * - A CSRF token is `<salt>.<HMAC(key, purpose, binding, salt)>`: a fresh salt per page, so no two
 *   pages show the same token, and the HMAC under a key only the server holds, so a token made for
 *   one session (or for none: the sign-in page's) does not pass in another, whatever cookies came
 *   with it. No secret cookie: the session is the secret.
 * - The sign-in form has no session yet; its token is bound to a random pre-session cookie
 *   (`gw_csrf`), accepted on the sign-in POST only, and the cookie is removed once signed in.
 * - A flash notice is what a POST did, for the page it redirects to: a cookie holding the notice,
 *   that page's path and an expiry, under the same HMAC with the session's binding. The page
 *   reads and removes it; a crafted address, or a flash from another session, shows nothing.
 *
 * Cookies follow the session cookie's rule (operator-session.ts): Secure in production or over
 * https, and then named `__Host-…` with Path=/ and no Domain, so a sibling subdomain cannot plant
 * or overwrite them; over plain http in development, the bare name with the scope's path.
 */
export type CsrfPurpose = 'session' | 'pre-session';

/** A key of its own for a scope's tokens and flashes, derived (HKDF-SHA256) from the scope's secret under `label`. */
export function pageTokenKey(secret: string, label: string): Buffer {
  return Buffer.from(hkdfSync('sha256', secret, Buffer.alloc(0), label, 32));
}

const macOf = (key: Buffer, ...parts: string[]) => createHmac('sha256', key).update(parts.join('\n')).digest('base64url');

function macHolds(given: string, expected: string): boolean {
  const [a, b] = [Buffer.from(given), Buffer.from(expected)];
  return a.length === b.length && timingSafeEqual(a, b);
}

/** A CSRF token for `binding` (a session's id, or the pre-session cookie's value). */
export function mintCsrf(key: Buffer, purpose: CsrfPurpose, binding: string): string {
  const salt = randomBytes(12).toString('base64url');
  return `${salt}.${macOf(key, 'csrf', purpose, binding, salt)}`;
}

/** Whether `token` was made by mintCsrf for this purpose and binding. */
export function csrfHolds(key: Buffer, purpose: CsrfPurpose, binding: string | undefined, token: unknown): boolean {
  if (!binding || typeof token !== 'string') return false;
  const m = /^([A-Za-z0-9_-]{16})\.([A-Za-z0-9_-]{43})$/.exec(token);
  return !!m && macHolds(m[2], macOf(key, 'csrf', purpose, binding, m[1]));
}

/** A cookie's name and attributes for the request's mode (see above): `__Host-<base>` when Secure. */
export function pageCookie(base: string, scopePath: string, secure: boolean) {
  return {
    name: secure ? `__Host-${base}` : base,
    options: { httpOnly: true, sameSite: 'strict' as const, secure, path: secure ? '/' : scopePath },
  };
}

/** A notice a POST left for the page it redirected to: which one (the page maps it to its text) and a count. */
export interface Flash {
  kind: string;
  count?: number;
}

/** How long a flash waits for its page. */
const FLASH_TTL_S = 60;

/** The flash cookie's value: the notice, the page it is for and its expiry, under the HMAC with the session's binding. */
export function sealFlash(key: Buffer, binding: string, path: string, flash: Flash, nowMs = Date.now()): string {
  const payload = Buffer.from(JSON.stringify([flash.kind, flash.count ?? null, path, Math.floor(nowMs / 1000) + FLASH_TTL_S])).toString(
    'base64url',
  );
  return `${payload}.${macOf(key, 'flash', binding, payload)}`;
}

/** The flash sealed for this binding and page, if it has not expired. */
export function openFlash(key: Buffer, binding: string | undefined, path: string, sealed: string | undefined, nowMs = Date.now()) {
  if (!binding || !sealed) return undefined;
  const m = /^([A-Za-z0-9_-]{1,600})\.([A-Za-z0-9_-]{43})$/.exec(sealed);
  if (!m || !macHolds(m[2], macOf(key, 'flash', binding, m[1]))) return undefined;
  try {
    const [kind, count, forPath, expires] = JSON.parse(Buffer.from(m[1], 'base64url').toString('utf8')) as unknown[];
    if (typeof kind !== 'string' || forPath !== path || typeof expires !== 'number' || expires * 1000 <= nowMs) return undefined;
    return { kind, count: typeof count === 'number' && Number.isSafeInteger(count) && count >= 0 ? count : undefined } as Flash;
  } catch {
    return undefined;
  }
}

/** What a page scope's routes use: the token of a page's forms, the POST check, and flash notices. */
export interface PageTokens {
  /** The CSRF token for this request's session (empty without one: such a page has no form that changes anything). */
  csrfToken: (req: FastifyRequest) => string;
  /** The preHandler of every POST but the console's sign-in: 403 unless the token is this session's. */
  csrf: preHandlerHookHandler;
  /** Leaves `flash` for the page at `path` (the one the POST redirects to). */
  setFlash: (req: FastifyRequest, reply: FastifyReply, path: string, flash: Flash) => void;
  /** The flash this session left for this page, removed as it is read. */
  takeFlash: (req: FastifyRequest, reply: FastifyReply) => Flash | undefined;
}

/** A CSRF refusal: answered by the scope's error handler as its 403 page. */
export const csrfRefused = () => Object.assign(new Error('invalid CSRF token'), { statusCode: 403 });

export function pageTokens(opts: {
  key: Buffer;
  /** The scope's prefix (/console, /portal): the cookies' path over plain http. */
  scopePath: string;
  /** The flash cookie's name (before any __Host- prefix). */
  flashCookie: string;
  /** Whether this request's cookies are Secure (and __Host-). */
  secure: (req: FastifyRequest) => boolean;
  /** The session the request's preHandler found: what tokens and flashes are bound to. */
  bindingOf: (req: FastifyRequest) => string | undefined;
}): PageTokens {
  const { key } = opts;
  const flashCookie = (req: FastifyRequest) => pageCookie(opts.flashCookie, opts.scopePath, opts.secure(req));
  return {
    csrfToken: (req) => {
      const binding = opts.bindingOf(req);
      return binding ? mintCsrf(key, 'session', binding) : '';
    },
    csrf: (req, _reply, done) => {
      const given = (req.body as Record<string, unknown> | undefined)?._csrf;
      done(csrfHolds(key, 'session', opts.bindingOf(req), given) ? undefined : csrfRefused());
    },
    setFlash: (req, reply, path, flash) => {
      const binding = opts.bindingOf(req);
      if (!binding) return;
      const c = flashCookie(req);
      void reply.setCookie(c.name, sealFlash(key, binding, path, flash), { ...c.options, maxAge: FLASH_TTL_S });
    },
    takeFlash: (req, reply) => {
      const c = flashCookie(req);
      const sealed = req.cookies[c.name];
      if (sealed === undefined) return undefined;
      // Read once, by the next page that shows notices: removed whether it was for this page or not.
      void reply.clearCookie(c.name, c.options);
      return openFlash(key, opts.bindingOf(req), req.url.split('?')[0], sealed);
    },
  };
}
