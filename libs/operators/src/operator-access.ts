import { createHash, randomBytes } from 'node:crypto';
import type { OperatorRoleColumn } from '@app/persistence';
import { hasCardLikeNumber, scrubCardNumbers } from '@app/platform/safe-error';

/** Roles from least to most: each allows everything the ones before it do. */
export const OPERATOR_ROLES = ['viewer', 'operator', 'admin'] as const;
export type OperatorRole = (typeof OPERATOR_ROLES)[number];

/**
 * The operators table's CHECK names which roles exist (OperatorRoleColumn says the same); this list
 * only orders them. The build fails if the two ever name different roles.
 */
const _sameRoles: [OperatorRole, OperatorRoleColumn] extends [OperatorRoleColumn, OperatorRole] ? true : never = true;

export function isOperatorRole(v: unknown): v is OperatorRole {
  return typeof v === 'string' && (OPERATOR_ROLES as readonly string[]).includes(v);
}

/** Whether an operator of role `has` may do what needs `needs`. */
export function roleAllows(has: OperatorRole, needs: OperatorRole): boolean {
  return OPERATOR_ROLES.indexOf(has) >= OPERATOR_ROLES.indexOf(needs);
}

/** What an operator's name may look like (the migration's CHECK says the same). */
export const OPERATOR_NAME = /^[A-Za-z0-9][A-Za-z0-9._@-]{0,63}$/;

/**
 * A name an operator may be given: OPERATOR_NAME's shape, and no card-like number in it (the
 * shape allows 16 digits, and the name is stored in clear, in operators and in every audit event
 * of that operator).
 */
export function isOperatorName(v: string): boolean {
  return OPERATOR_NAME.test(v) && !hasCardLikeNumber(v);
}

/**
 * Personal operator tokens: `op_` then 32 random bytes in base64url (43 characters), so a leaked
 * one is recognisable in a scanner. Only the SHA-256 is stored; a token is found by its hash (an
 * equality lookup on a unique index: nothing to compare character by character).
 */
export const OPERATOR_TOKEN_PREFIX = 'op_';
const TOKEN_SHAPE = /^op_[A-Za-z0-9_-]{43}$/;

export function newOperatorToken(): { token: string; hash: Buffer } {
  const token = OPERATOR_TOKEN_PREFIX + randomBytes(32).toString('base64url');
  return { token, hash: operatorTokenHash(token) };
}

export function operatorTokenHash(token: string): Buffer {
  return createHash('sha256').update(token).digest();
}

/** Whether a string has a token's shape (anything else is refused without a lookup). */
export function looksLikeOperatorToken(v: string | undefined): v is string {
  return !!v && TOKEN_SHAPE.test(v);
}

const SECRET_KEY = /token|secret|password|passphrase|key|cvv|cvc|pan|card/i;
const MAX_TEXT = 200;

/**
 * The detail of an audit event as stored: options and parameters minus anything named like a
 * secret, strings cut to 200 characters, card-like numbers censored as in the logs and NUL
 * characters replaced (see maskCardLike).
 */
export function auditDetail(raw: Record<string, unknown>): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const [key, v] of Object.entries(raw)) {
    if (v === undefined || SECRET_KEY.test(key)) continue;
    const k = maskCardLike(key);
    if (typeof v === 'string') out[k] = cut(maskCardLike(v));
    else if (typeof v === 'number' || typeof v === 'boolean' || v === null) out[k] = v;
    else out[k] = cut(maskCardLike(JSON.stringify(v)));
  }
  return out;
}

const cut = (s: string) => (s.length > MAX_TEXT ? `${s.slice(0, MAX_TEXT)}…` : s);

/**
 * Text as the trail may store it: every card-like number censored by the logs' own rule
 * (scrubCardNumbers: 13 to 19 digits passing Luhn, grouped by spaces or dashes or not, so
 * `4111 1111 1111 1111` pasted into an option or a URL goes too), credentials removed (see
 * CREDENTIAL), and NUL, which Postgres refuses in text and jsonb, replaced by U+FFFD: a NUL in a
 * URL parameter or an option must be recorded, not make the trail look unavailable (a 503 for bad
 * input, the action refused as unrecordable).
 */
export function maskCardLike(s: string): string {
  return scrubCardNumbers(s)
    .replace(CREDENTIAL, '[credential removed]')
    .replace(/\u0000/g, '\uFFFD');
}

/**
 * The gateway's own credentials by their prefixes: an operator token (op_), a merchant key (mk_,
 * both 43 base64url characters when whole) and a webhook secret (whsec_ + base64). SECRET_KEY
 * drops the options named like them; this catches a whole one pasted where a name, an argument
 * or a URL was expected (whole only, so an operator or merchant name that merely starts with op_
 * stays readable).
 */
const CREDENTIAL = /(?:op|mk)_[A-Za-z0-9_-]{43}(?![A-Za-z0-9_-])|whsec_[A-Za-z0-9+/]{32,}={0,2}/g;
