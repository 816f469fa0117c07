import { isLuhnValid } from '@app/card/luhn';

/**
 * What a log line may say about an error: its type, code and a scrubbed message, and the same for
 * its causes. Nothing else the error object carries is ever copied: a TypeORM QueryFailedError
 * holds the statement's `parameters` (card ciphertext, wrapped data keys, cardholder and billing
 * data), a pg error its `detail` (`Key (x)=(…)`, `Failing row contains (…)`) and `where`, and
 * library errors hold requests, sockets and configs. The default pino serializer copies every
 * enumerable property; this one copies none of them.
 */
export interface SafeError {
  type: string;
  message: string;
  code?: string;
  /** For a database error: where it happened, by name only. */
  constraint?: string;
  table?: string;
  column?: string;
  stack?: string;
  cause?: SafeError;
  errors?: SafeError[];
}

const MAX_DEPTH = 4;
const MAX_ERRORS = 10;
const MAX_MESSAGE = 500;

// 13 to 19 digits, optionally grouped by single spaces or dashes: the shape of a card number. A
// UUID is matched first and kept whole: its dash-separated digit groups (as in
// 61374124-2924-47b7-…) would otherwise pass for a grouped card number in about 1 of 400 ids,
// mangling job, transaction and correlation ids in the logs.
const DIGIT_RUN = /[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}(?![0-9a-z])|(?<!\d)\d(?:[ -]?\d){12,18}(?!\d)/gi;
const UUID = /^[0-9a-f]{8}-/i;
export const CARD_LIKE_CENSOR = '[card-like number]';

/**
 * Replaces every Luhn-valid run of 13 to 19 digits (spaces and dashes between digits allowed) by
 * a marker. Other numbers (ids, epoch milliseconds, amounts) mostly fail the Luhn check and stay.
 */
export function scrubCardNumbers(text: string): string {
  return text.replace(DIGIT_RUN, (run) => (!UUID.test(run) && isLuhnValid(run.replace(/[ -]/g, '')) ? CARD_LIKE_CENSOR : run));
}

/** True when the text holds something `scrubCardNumbers` would hide. */
export function hasCardLikeNumber(text: string): boolean {
  return scrubCardNumbers(text) !== text;
}

/**
 * A Postgres message can quote the offending value at its end: `invalid input syntax for type
 * uuid: "…"`, `invalid input value for enum x: "…"`, `invalid byte sequence for encoding "UTF8":
 * 0x00`. Names are quoted in the middle (`violates check constraint "c"`) and are kept; the value
 * after the last `: ` is withheld. `detail`, `where`, `hint` and the parameters are never read.
 */
function databaseMessage(message: string): string {
  return message.replace(/: (?:"[^]*"|'[^]*'|\S+)$/, ': [value withheld]');
}

const SQLSTATE = /^[0-9A-Z]{5}$/;

interface ErrorLike {
  name?: unknown;
  message?: unknown;
  code?: unknown;
  stack?: unknown;
  cause?: unknown;
  errors?: unknown;
  driverError?: unknown;
  severity?: unknown;
  constraint?: unknown;
  table?: unknown;
  column?: unknown;
}

/**
 * The `code` of anything thrown (pg SQLSTATEs and Node/ioredis codes are strings), as text for a
 * log line or a lookup, or `fallback` when there is none (or it is not a string or a number).
 */
export function errorCodeOf(thrown: unknown, fallback: string): string {
  const code = thrown !== null && typeof thrown === 'object' ? (thrown as { code?: unknown }).code : undefined;
  return typeof code === 'string' || typeof code === 'number' ? String(code) : fallback;
}

const str = (v: unknown): string | undefined => (typeof v === 'string' && v.length > 0 ? v : undefined);

function isDatabaseError(e: ErrorLike): boolean {
  return typeof e.code === 'string' && SQLSTATE.test(e.code) && typeof e.severity === 'string';
}

function cleanMessage(message: string, database: boolean): string {
  const m = scrubCardNumbers(database ? databaseMessage(message) : message);
  return m.length > MAX_MESSAGE ? `${m.slice(0, MAX_MESSAGE)}…` : m;
}

/** The stack's frames under a header rebuilt from the clean message (the original header repeats the raw message). */
function cleanStack(stack: unknown, header: string): string | undefined {
  if (typeof stack !== 'string') return undefined;
  const at = stack.search(/\n\s+at /);
  return at < 0 ? header : header + scrubCardNumbers(stack.slice(at));
}

/** The one way any app turns an error (or anything thrown) into log fields. */
export function safeError(thrown: unknown, depth = 0): SafeError {
  if (thrown === null || typeof thrown !== 'object') {
    return { type: thrown === null ? 'null' : typeof thrown, message: cleanMessage(String(thrown), false) };
  }
  const e = thrown as ErrorLike;
  // TypeORM wraps the driver's error: its code, constraint and table are on driverError.
  const driver = (e.driverError && typeof e.driverError === 'object' ? e.driverError : e) as ErrorLike;
  const database = isDatabaseError(driver);
  const type = str(e.name) ?? str(thrown.constructor?.name) ?? 'Error';
  const message = cleanMessage(str(e.message) ?? '', database);
  const out: SafeError = { type, message };
  const code = typeof driver.code === 'string' || typeof driver.code === 'number' ? String(driver.code) : undefined;
  if (code) out.code = scrubCardNumbers(code).slice(0, 64);
  if (database) {
    for (const k of ['constraint', 'table', 'column'] as const) {
      const v = str(driver[k]);
      if (v) out[k] = v.slice(0, 128);
    }
  }
  const stack = cleanStack(e.stack, `${type}: ${message}`);
  if (stack) out.stack = stack;
  if (depth < MAX_DEPTH) {
    if (e.cause !== undefined && e.cause !== thrown) out.cause = safeError(e.cause, depth + 1);
    if (Array.isArray(e.errors)) out.errors = e.errors.slice(0, MAX_ERRORS).map((x) => safeError(x, depth + 1));
  }
  return out;
}

/** One line's worth: `Type [code]: message`, for places that log a string. */
export function safeErrorText(thrown: unknown): string {
  const s = safeError(thrown);
  return `${s.type}${s.code ? ` [${s.code}]` : ''}: ${s.message}`;
}

let guarded = false;

/**
 * Node prints an uncaught exception or unhandled rejection with util.inspect, every property of
 * the error included (a QueryFailedError's parameters among them), before it exits. These
 * handlers print the safe form instead and exit the same way (code 1). Installed once per process.
 */
export function guardProcessErrors(app: string): void {
  if (guarded) return;
  guarded = true;
  const die = (what: string) => (e: unknown) => {
    process.stderr.write(`${app}: ${what}: ${safeErrorText(e)}\n${safeError(e).stack ?? ''}\n`);
    process.exit(1);
  };
  process.on('uncaughtException', die('uncaught exception'));
  process.on('unhandledRejection', die('unhandled rejection'));
}
