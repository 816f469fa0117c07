import { randomUUID } from 'node:crypto';
import type { IncomingMessage } from 'node:http';
import { LoggerModule } from 'nestjs-pino';
import pino from 'pino';
import Redact from '@pinojs/redact';
import type { DynamicModule } from '@nestjs/common';
import { currentCorrelationId } from './correlation';
import { guardProcessErrors, hasCardLikeNumber, safeError, scrubCardNumbers } from './safe-error';

/** The keys that hold card data or a merchant's credential, censored in every log line. */
export const CARD_FIELDS = [
  'cardNumber',
  'cardSecurityCode',
  'cardExpirationDate',
  'cardHolder',
  'pan',
  'securityCode',
  'sealedCard',
  'merchantKey',
];

/**
 * Every path that can hold card data or a credential, at the depths our payloads use (a job's
 * `p`, a request's `tokencard`, a sale's `payment`). Bodies are never logged on purpose; these
 * paths are the second line of defence for anything that ends up in a log call by mistake.
 * Wildcards stop at two levels to keep redaction cheap; no payload holds card data deeper
 * (docs/decisions/0003-log-redaction-only-where-there-is-something-to-censor.md).
 * The headers that carry credentials are censored wherever a card field would be (a request's
 * `req.headers.authorization` among them): every path starts with a wildcard or is a top-level
 * key, a shape the library censors on a copy without touching the caller's object.
 */
const SENSITIVE_FIELDS = [...CARD_FIELDS, 'authorization', 'cookie'];
export const REDACT_PATHS = SENSITIVE_FIELDS.flatMap((f) => [f, `*.${f}`, `*.*.${f}`]);

const REQUEST_ID = /^[A-Za-z0-9._-]{1,64}$/;
const ID_SHAPE = /[A-Za-z._-]/;
const LONG_DIGITS = /\d{12}/;

/**
 * A caller's x-request-id is kept only when it is safe to log and to echo: at most 64 of
 * `A-Z a-z 0-9 . _ -`, at least one letter or separator, and no run of 12 or more digits (so no
 * card number, grouped or not, can ride in it). Anything else is replaced by a fresh UUID.
 */
export function isSafeRequestId(id: string): boolean {
  return REQUEST_ID.test(id) && ID_SHAPE.test(id) && !LONG_DIGITS.test(id.replace(/[._-]/g, ''));
}

const CHOSEN = Symbol('requestId');
/** Probes, polled all the time: not worth a log line each. */
const UNLOGGED_PATHS = new Set(['/health', '/metrics']);

/**
 * The request's id: the caller's x-request-id when it is safe, else a new one. Memoized on the
 * request, so Fastify, the HTTP log line and the answer's x-request-id header all show one id.
 */
export function requestIdOf(req: IncomingMessage): string {
  const memo = req as IncomingMessage & { [CHOSEN]?: string };
  if (memo[CHOSEN]) return memo[CHOSEN];
  const h = req.headers['x-request-id'];
  return (memo[CHOSEN] = typeof h === 'string' && isSafeRequestId(h) ? h : randomUUID());
}

/** A percent-escape of an ASCII character (a space, a dash, a digit); escapes of other bytes are left alone. */
const ASCII_ESCAPE = /%([0-7][0-9A-Fa-f])/g;

/**
 * The path of a request URL: the query string can carry anything a caller typed, and is never
 * logged. The path is logged as sent unless it holds a card-like number once its ASCII escapes
 * are decoded: a client sends a number typed with spaces as `4111%201111%201111%201111`, which
 * the censor (spaces and dashes between digits) would not see in the raw form; such a path is
 * logged decoded and censored.
 */
export function pathOf(url: string | undefined): string {
  if (!url) return '';
  const q = url.search(/[?#]/);
  const path = q < 0 ? url : url.slice(0, q);
  const decoded = path.replace(ASCII_ESCAPE, (_, h: string) => String.fromCharCode(parseInt(h, 16)));
  return hasCardLikeNumber(decoded) ? scrubCardNumbers(decoded) : path;
}

/** An `err` or `error` field: an object (an Error or anything thrown) in its safe form; a plain value as it is, scrubbed. */
function errorField(v: unknown): unknown {
  if (typeof v === 'object' && v !== null) return safeError(v);
  return typeof v === 'string' ? scrubCardNumbers(v) : v;
}

/** How deep REDACT_PATHS reach below a log object's own keys (`*.*.field`). */
const REDACT_DEPTH = 3;
const SENSITIVE_KEYS = new Set(SENSITIVE_FIELDS);

/**
 * Whether `value` has a sensitive key (a card field, or a header that REDACT_PATHS name) within
 * `depth` levels, in any kind of object (a class instance such as a DTO too). At least every
 * place REDACT_PATHS can match; more (a header name at another depth) only costs the redaction.
 */
function holdsSensitiveKey(value: unknown, depth: number): boolean {
  if (depth === 0 || typeof value !== 'object' || value === null || ArrayBuffer.isView(value)) return false;
  for (const key of Object.keys(value)) {
    if (SENSITIVE_KEYS.has(key) || holdsSensitiveKey((value as Record<string, unknown>)[key], depth - 1)) return true;
  }
  return false;
}

/**
 * Redaction that costs nothing when there is nothing to censor. pino's own `redact` option runs
 * @pinojs/redact over every line and every child logger's bindings: measured at 25 µs a line and
 * 12 µs a child (docs/decisions/0003-log-redaction-only-where-there-is-something-to-censor.md), the
 * largest item of a request after the socket writes. Here
 * a walk of the line's keys (about 1 µs) looks for a sensitive key where REDACT_PATHS could
 * match, and only a line that has one goes through the same library with the same paths. Keys
 * with a serializer of their own (`serialized`: the request, the response, errors) are left to it:
 * it writes a fixed, safe shape, which the walk would otherwise search in its raw form (an
 * IncomingMessage).
 */
type Redaction = (obj: Record<string, unknown>) => Record<string, unknown>;

/**
 * A copy of the levels redaction reaches, for the library to censor: @pinojs/redact 0.4.0 writes
 * into the caller's nested objects when one path censors a parent and another a field below it
 * (`securityCode: { cardNumber }`), so it never sees the caller's own. Objects are copied as JSON
 * would write them (own enumerable keys); values with a toJSON of their own (a Date, a Buffer)
 * and everything deeper are passed by reference, as the library does not go there.
 */
function copyForRedaction(value: unknown, depth: number): unknown {
  if (depth === 0 || typeof value !== 'object' || value === null || ArrayBuffer.isView(value)) return value;
  if (typeof (value as { toJSON?: unknown }).toJSON === 'function') return value;
  if (Array.isArray(value)) return value.map((v) => copyForRedaction(v, depth - 1));
  const out: Record<string, unknown> = {};
  for (const key of Object.keys(value)) out[key] = copyForRedaction((value as Record<string, unknown>)[key], depth - 1);
  return out;
}

function guardedRedaction(serialized: readonly string[]): Redaction {
  const redact = Redact({ paths: REDACT_PATHS, censor: '[REDACTED]', serialize: false }) as (o: object) => Record<string, unknown>;
  const skip = new Set(serialized);
  return (obj) => {
    let found = false;
    let skipped = false;
    for (const key of Object.keys(obj)) {
      if (skip.has(key)) skipped = true;
      else if (SENSITIVE_KEYS.has(key) || holdsSensitiveKey(obj[key], REDACT_DEPTH - 1)) found = true;
    }
    if (!found) return obj;
    // The serialized keys stay out of the library's reach (an IncomingMessage is not copied) and
    // keep their place in the line.
    const rest: Record<string, unknown> = {};
    for (const key of Object.keys(obj)) if (!skip.has(key)) rest[key] = copyForRedaction(obj[key], REDACT_DEPTH);
    const censored = redact(rest);
    if (!skipped) return censored;
    const out: Record<string, unknown> = {};
    for (const key of Object.keys(obj)) out[key] = skip.has(key) ? obj[key] : censored[key];
    return out;
  };
}

/**
 * Censors what a log line is built from that no key-based check covers: a serializer's output,
 * a value put in the message (`%j`, `%o`).
 */
const redactAll = guardedRedaction([]);

/** What a serializer wrote, censored as a value under its key would be. */
function censoredSerializers(serializers: Record<string, pino.SerializerFn>): Record<string, pino.SerializerFn> {
  const out: Record<string, pino.SerializerFn> = {};
  for (const [key, serialize] of Object.entries(serializers)) {
    out[key] = (value: unknown) => {
      const written: unknown = serialize(value);
      return typeof written === 'object' && written !== null ? redactAll({ [key]: written })[key] : written;
    };
  }
  return out;
}

/**
 * The pino options every app logs with: errors go through `safeError` (code and scrubbed
 * message, never parameters or driver details), card-shaped numbers in a message string are
 * censored, and the paths in REDACT_PATHS are censored in objects (guardedRedaction; a child
 * logger's bindings are censored by `safeLogger`). `serialized`: the keys the logger has
 * serializers for beyond `err` and `error`.
 */
export function safeLogOptions(serialized: readonly string[] = []) {
  const redaction = guardedRedaction(['err', 'error', ...serialized]);
  return {
    // pino applies the bindings formatter to the root logger's bindings only; safeLogger covers children.
    formatters: { log: redaction, bindings: redaction },
    serializers: censoredSerializers({ err: errorField, error: errorField }),
    hooks: {
      logMethod(this: pino.Logger, args: unknown[], method: pino.LogFn): void {
        // A bare Error first: pino would put it under `err` itself, and take its raw message as the line's.
        if (args[0] instanceof Error) args[0] = { err: args[0] };
        const first = args[0] as Record<string, unknown> | null;
        // An error and no message of its own: pino would use the error's raw message; use the clean one.
        const err = typeof first === 'object' && first !== null ? (first.err ?? first.error) : undefined;
        if (typeof err === 'object' && err !== null && typeof args[1] !== 'string') args.splice(1, 0, safeError(err).message);
        for (let i = 0; i < args.length; i++) {
          if (typeof args[i] === 'string') args[i] = scrubCardNumbers(args[i] as string);
          // A value for the message's %j/%o/%O (the first argument, an object, is the line's own: formatters.log).
          else if (i > 0 && typeof args[i] === 'object' && args[i] !== null) args[i] = redactAll(args[i] as Record<string, unknown>);
        }
        method.apply(this, args as Parameters<pino.LogFn>);
      },
    },
  } satisfies pino.LoggerOptions;
}

/** The options of a logger with no serializers beyond errors (the CLI's, the tests'). */
export const SAFE_LOG_OPTIONS = safeLogOptions();

/**
 * A pino logger with `safeLogOptions`, covering what pino's formatters do not reach: a child
 * logger's bindings (any depth: each inherits `child` and `setBindings`), the serializers and log
 * formatter a child is given in its options (pino-http gives its request logger the request and
 * response serializers), and the root's own serializers' output.
 */
export function safeLogger(options: pino.LoggerOptions, destination: pino.DestinationStream): pino.Logger {
  // Only keys that really have a serializer are left to it.
  const serialized = Object.keys(options.serializers ?? {});
  const safe = safeLogOptions(serialized);
  const root = pino(
    { ...options, ...safe, serializers: { ...safe.serializers, ...censoredSerializers(options.serializers ?? {}) } },
    destination,
  );
  // The same check as the lines' (safeLogOptions), for what pino's formatters do not reach.
  const redaction = safe.formatters.log;
  type Child = (this: pino.Logger, bindings: pino.Bindings, childOptions?: pino.ChildLoggerOptions) => pino.Logger;
  type SetBindings = (this: pino.Logger, bindings: pino.Bindings) => void;
  // Called on whichever logger (the root, a child, a grandchild) they are asked of.
  const child = Reflect.get(root, 'child') as unknown as Child;
  const setBindings: SetBindings = Reflect.get(root, 'setBindings');
  root.child = function (this: pino.Logger, bindings: pino.Bindings, childOptions?: pino.ChildLoggerOptions) {
    let guarded = childOptions;
    if (childOptions?.serializers) guarded = { ...guarded, serializers: censoredSerializers(childOptions.serializers) };
    const log = childOptions?.formatters?.log;
    if (log)
      guarded = { ...guarded, formatters: { ...childOptions.formatters, log: (obj) => redaction(log(obj) as Record<string, unknown>) } };
    return child.call(this, redaction(bindings), guarded);
  } as unknown as typeof root.child;
  root.setBindings = function (this: pino.Logger, bindings: pino.Bindings) {
    setBindings.call(this, redaction(bindings));
  };
  return root;
}

export function loggingModule(app: string, level: string, replica?: string): DynamicModule {
  const replicaField = replica ? { replica } : {};
  guardProcessErrors(app);
  const serializers = {
    req: (req: { id: string; method: string; url: string }) => ({ id: req.id, method: req.method, url: pathOf(req.url) }),
    res: (res: { statusCode: number }) => ({ statusCode: res.statusCode }),
  };
  const logger = safeLogger(
    {
      level,
      name: app,
      serializers,
      // Ties worker log lines to the request that caused them.
      mixin: () => {
        const correlationId = currentCorrelationId();
        return correlationId ? { ...replicaField, correlationId } : replicaField;
      },
    },
    // Synchronous writes: the last lines before an exit (a drain, a boot failure) are the ones
    // an operator needs, and an async buffer loses them on process.exit.
    pino.destination({ dest: 1, sync: true }),
  );
  return LoggerModule.forRoot({
    pinoHttp: {
      logger,
      genReqId: (req) => requestIdOf(req),
      // Decided on the bare path (no query string), without the card check pathOf adds for logging.
      autoLogging: { ignore: (req) => UNLOGGED_PATHS.has((req.url ?? '').split('?', 1)[0]) },
      // pino-http would put its own request and response serializers in place of the logger's.
      serializers: { ...SAFE_LOG_OPTIONS.serializers, ...serializers },
    },
  });
}
