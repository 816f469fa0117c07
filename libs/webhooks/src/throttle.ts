/**
 * The per-listener webhook throttle (issue 16): a merchant's maximum deliveries per second to each
 * of its listeners, or none. The range is the one the merchants table's CHECK holds.
 */
export const WEBHOOK_THROTTLE_RANGE = { min: 1, max: 10_000 } as const;

/** The command that sets it, and the audit trail's name for a change, from the CLI or the console. */
export const SET_WEBHOOK_THROTTLE_ACTION = 'merchant:set-webhook-throttle';

/** The word for no throttle, in the CLI's option and output and in the console's form. */
export const THROTTLE_OFF = 'off';

/** What is wrong with a throttle value, for the caller to put after the field's or option's name. */
export const THROTTLE_VALUE_RULE = `must be a whole number of deliveries per second from ${WEBHOOK_THROTTLE_RANGE.min} to ${WEBHOOK_THROTTLE_RANGE.max}, or "${THROTTLE_OFF}"`;

/** A throttle as typed (CLI option, console form): deliveries per second, null for "off", undefined when it is neither. */
export function parseThrottle(given: string): number | null | undefined {
  const v = given.trim();
  if (v.toLowerCase() === THROTTLE_OFF) return null;
  if (!/^\d{1,5}$/.test(v)) return undefined;
  const n = Number(v);
  return n >= WEBHOOK_THROTTLE_RANGE.min && n <= WEBHOOK_THROTTLE_RANGE.max ? n : undefined;
}

/** A stored throttle as shown to operators. */
export const throttleShown = (perS: number | null): number | typeof THROTTLE_OFF => perS ?? THROTTLE_OFF;

/**
 * The bucket behind a throttle of `perS` deliveries per second: one token every `intervalUs`
 * microseconds (rounded up, so never faster than perS), at most `burst` held at once. A burst of
 * one second's tenth (at least 1) keeps a fast throttle from turning every delivery into a
 * deferral while still holding any second to perS + burst − 1 (a slow throttle, under 20/s, to
 * exactly perS).
 */
export function throttleBucket(perS: number): { intervalUs: number; burst: number } {
  return { intervalUs: Math.ceil(1_000_000 / perS), burst: Math.max(1, Math.floor(perS / 10)) };
}
