import type { FastifyInstance } from 'fastify';
import { DomainError, ErrorCodes } from '@app/contracts';

/**
 * The one way a JSON body enters the api (issue 13: no 5xx from any body). It runs as Fastify's
 * application/json parser, so before any handler, hashing or recursive code sees the body:
 *
 * 1. the bytes must be UTF-8 (a leading BOM is stripped, as TextDecoder does by default);
 * 2. a linear scan of the text, before JSON.parse, refuses nesting deeper than MAX_DEPTH and
 *    number literals a double cannot keep exactly (9007199254740993 would become ...992);
 * 3. JSON.parse;
 * 4. one iterative walk refuses C0 control characters and lone surrogates in any string (values
 *    and member names: Postgres refuses both with a 500), unsafe integers, non-finite numbers and
 *    the member names `__proto__`, `constructor` and `prototype` (prototype poisoning).
 *
 * Every refusal is a 400 naming the field as the merchant knows it (`order.reference`, not
 * `transaction-request.sale.order.reference`); no message repeats the offending value.
 */

/** The deepest legitimate body nests about 7 containers (envelope → sale → payment → split → [i] → …). */
export const MAX_DEPTH = 16;

const ENVELOPE = 'transaction-request';
const ENVELOPE_RESERVED = new Set(['version', 'verification']);
// A member name is shown only when plain, and never with 8 digits or more in it (dashes or not):
// it could be a card number.
const PLAIN_KEY = /^[A-Za-z0-9_-]{1,64}$/;
const showable = (s: string) => PLAIN_KEY.test(s) && s.replace(/\D/g, '').length < 8;
const C0 = /[\u0000-\u001f]/;
const NOT_JSON = 'The request body is not valid JSON.';

const decoder = new TextDecoder('utf-8', { fatal: true });

declare global {
  interface String {
    /** ES2024, on Node 20: false when the string holds a lone surrogate. */
    isWellFormed(): boolean;
  }
}

/** A step of a path: a member name, an array index, or null for a member name not fit to show. */
type Segment = string | number | null;

/** Parses a JSON request body or throws the DomainError (400) naming what is wrong with it. */
export function parseJsonBody(raw: Uint8Array): unknown {
  if (raw.length === 0) throw malformed('The request body is empty; it must be a JSON document.');
  let text: string;
  try {
    text = decoder.decode(raw);
  } catch {
    throw invalidUtf8(raw);
  }
  const fractions = scan(text);
  if (fractions.length) text = asText(text, fractions);
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    // JSON.parse's own message can quote the body (a card number): never passed on.
    throw malformed(NOT_JSON);
  }
  // Text decoded from valid UTF-8 holds no lone surrogate, and JSON.parse refuses raw control
  // characters in strings: only an escape (\u0000, \ud800, \n...) can bring either in.
  walk(value, text.includes('\\'));
  return value;
}

/**
 * Fastify's application/json parser, replacing the framework's: the body as a buffer (the same
 * bodyLimit), parsed by parseJsonBody. The depth bound holds before anything recursive (the
 * idempotency fingerprint serializes the parsed body) sees it.
 */
export function registerJsonBodyParser(fastify: FastifyInstance, bodyLimit = fastify.initialConfig.bodyLimit): void {
  if (fastify.hasContentTypeParser('application/json')) fastify.removeContentTypeParser('application/json');
  fastify.addContentTypeParser('application/json', { parseAs: 'buffer', bodyLimit }, (_req, body, done) => {
    let value: unknown;
    try {
      value = parseJsonBody(body as Buffer);
    } catch (e) {
      // A throw here would escape Fastify's stream callback and end the process.
      done(e as Error, undefined);
      return;
    }
    done(null, value);
  });
}

// ---------------------------------------------------------------------------------------------
// 2. The scan before JSON.parse: linear, no recursion, whatever the text is.

/**
 * Counts [ and { outside strings (a string ends at a quote preceded by an even number of
 * backslashes) and checks number literals. Not a validator: what is not JSON is left for
 * JSON.parse to refuse.
 */
function scan(text: string): number[] {
  const n = text.length;
  const fractions: number[] = [];
  // The open containers ({ or [) and the last character that was not white space: a number is
  // only rewritten where a value stands (a number as a member name stays invalid JSON).
  const open: number[] = [];
  let last = -1;
  for (let i = 0; i < n; i++) {
    const c = text.charCodeAt(i);
    if (c === 0x20 || c === 0x0a || c === 0x0d || c === 0x09) continue;
    if (c === 0x22 /* " */) {
      const end = stringEnd(text, i);
      if (end < 0) return fractions;
      i = end;
    } else if (c === 0x7b /* { */ || c === 0x5b /* [ */) {
      open.push(c);
      if (open.length > MAX_DEPTH) {
        const param = render(segmentsAt(text, i));
        throw DomainError.validation(ErrorCodes.InvalidField, param, `${param} nests objects or arrays deeper than ${MAX_DEPTH} levels.`);
      }
    } else if (c === 0x7d /* } */ || c === 0x5d /* ] */) {
      open.pop();
    } else if (c === 0x2d /* - */ || (c >= 0x30 && c <= 0x39)) {
      let j = i + 1;
      let exponent = false;
      let point = false;
      for (; j < n; j++) {
        const d = text.charCodeAt(j);
        if (d === 0x65 || d === 0x45) exponent = true;
        else if (d === 0x2e) point = true;
        else if (!((d >= 0x30 && d <= 0x39) || d === 0x2b || d === 0x2d)) break;
      }
      // Up to 15 significant digits without an exponent, a double always keeps a literal.
      if ((j - i > 15 || exponent) && altered(text.slice(i, j))) {
        const param = render(segmentsAt(text, i));
        throw DomainError.validation(
          ErrorCodes.InvalidField,
          param,
          `${param} is a number that cannot be kept exactly (more than 15 significant digits, or out of range); send it as a string.`,
        );
      }
      const atValue =
        last === -1 || last === 0x3a /* : */ || last === 0x5b /* [ */ || (last === 0x2c /* , */ && open[open.length - 1] === 0x5b);
      if ((point || exponent) && atValue && JSON_NUMBER.test(text.slice(i, j))) fractions.push(i, j);
      i = j - 1;
    }
    last = c;
  }
  return fractions;
}

const JSON_NUMBER = /^-?(?:0|[1-9]\d*)(?:\.\d+)?(?:[eE][+-]?\d+)?$/;

/**
 * The text with every number literal written with a fraction or an exponent turned into a
 * string of exactly that text. JSON.parse would read 150000.0 as the integer 150000, and an
 * amount field could not tell it from 150000: a decimal point in an amount means the merchant
 * sent currency units, not cents, and must be refused, never guessed. Fields that take decimals
 * (a split percentage) read the text; text fields keep what was written.
 */
function asText(text: string, spans: number[]): string {
  let out = '';
  let from = 0;
  for (let k = 0; k < spans.length; k += 2) {
    out += `${text.slice(from, spans[k])}"${text.slice(spans[k], spans[k + 1])}"`;
    from = spans[k + 1];
  }
  return out + text.slice(from);
}

/** Index of the quote closing the string opened at `start`, or -1 when it is not closed. */
function stringEnd(text: string, start: number): number {
  let from = start + 1;
  for (;;) {
    const q = text.indexOf('"', from);
    if (q < 0) return -1;
    let k = q - 1;
    while (k > start && text.charCodeAt(k) === 0x5c /* \ */) k--;
    if ((q - 1 - k) % 2 === 0) return q;
    from = q + 1;
  }
}

/** Whether JSON.parse would turn this number literal into another value than the text says. */
export function altered(literal: string): boolean {
  const x = Number(literal);
  if (Number.isNaN(x)) return false; // not a JSON number: JSON.parse refuses it
  const given = decimalKey(literal);
  return given === undefined || given !== decimalKey(String(x));
}

/** A decimal as `[-]digits e exponent` with no leading or trailing zeros: equal keys, equal numbers. */
function decimalKey(s: string): string | undefined {
  let i = 0;
  const neg = s.charCodeAt(0) === 0x2d;
  if (neg) i = 1;
  let mantissa = '';
  let point = -1;
  let exp = 0;
  for (; i < s.length; i++) {
    const c = s.charCodeAt(i);
    if (c >= 0x30 && c <= 0x39) mantissa += s[i];
    else if (c === 0x2e && point < 0) point = mantissa.length;
    else if (c === 0x65 || c === 0x45) {
      exp = Number(s.slice(i + 1));
      if (!Number.isSafeInteger(exp)) return undefined;
      break;
    } else return undefined; // "Infinity": never what a literal said
  }
  if (point < 0) point = mantissa.length;
  let lead = 0;
  while (lead < mantissa.length && mantissa.charCodeAt(lead) === 0x30) lead++;
  let end = mantissa.length;
  while (end > lead && mantissa.charCodeAt(end - 1) === 0x30) end--;
  if (end === lead) return '0';
  return `${neg ? '-' : ''}${mantissa.slice(lead, end)}e${point - lead + exp}`;
}

// ---------------------------------------------------------------------------------------------
// 4. The walk after JSON.parse: an explicit stack, each container once.

interface Frame {
  node: object;
  parent: Frame | undefined;
  key: Segment;
}

/**
 * Refuses what the api must never store or look up; `checkStrings` false skips the string checks
 * (for a text without a backslash, which cannot hold a control character or a lone surrogate).
 */
export function walk(value: unknown, checkStrings = true): void {
  if (value === null || typeof value !== 'object') {
    checkScalar(value, undefined, null, checkStrings, true);
    return;
  }
  const stack: Frame[] = [{ node: value, parent: undefined, key: null }];
  while (stack.length > 0) {
    const frame = stack.pop()!;
    const node = frame.node;
    if (Array.isArray(node)) {
      for (let i = 0; i < node.length; i++) {
        const v: unknown = node[i];
        if (v !== null && typeof v === 'object') stack.push({ node: v, parent: frame, key: i });
        else checkScalar(v, frame, i, checkStrings, false);
      }
    } else {
      const obj = node as Record<string, unknown>;
      const keys = Object.keys(obj);
      for (let i = 0; i < keys.length; i++) {
        const key = keys[i];
        if (key === '__proto__' || key === 'constructor' || key === 'prototype') {
          const param = render(pathOf(frame, key));
          throw DomainError.validation(ErrorCodes.InvalidField, param, `${param} is not an accepted member name.`);
        }
        if (checkStrings && !textOk(key)) {
          const param = render(pathOf(frame, null));
          throw DomainError.validation(
            ErrorCodes.InvalidField,
            param,
            `A member name (${param}) holds a control character or an unpaired surrogate.`,
          );
        }
        const v = obj[key];
        if (v !== null && typeof v === 'object') stack.push({ node: v, parent: frame, key });
        else checkScalar(v, frame, key, checkStrings, false);
      }
    }
  }
}

function checkScalar(v: unknown, parent: Frame | undefined, key: Segment, checkStrings: boolean, root: boolean): void {
  if (typeof v === 'string') {
    if (!checkStrings) return;
    if (C0.test(v)) {
      const param = root ? 'body' : render(pathOf(parent!, key));
      throw DomainError.validation(ErrorCodes.InvalidField, param, `${param} must not contain control characters (U+0000 to U+001F).`);
    }
    if (!v.isWellFormed()) {
      const param = root ? 'body' : render(pathOf(parent!, key));
      throw DomainError.validation(ErrorCodes.InvalidField, param, `${param} holds an unpaired surrogate: it is not valid Unicode text.`);
    }
  } else if (typeof v === 'number') {
    if (!Number.isFinite(v)) {
      const param = root ? 'body' : render(pathOf(parent!, key));
      throw DomainError.validation(ErrorCodes.InvalidField, param, `${param} must be a finite number.`);
    }
    if (Number.isInteger(v) && !Number.isSafeInteger(v)) {
      const param = root ? 'body' : render(pathOf(parent!, key));
      throw DomainError.validation(
        ErrorCodes.InvalidField,
        param,
        `${param} is an integer beyond 2^53 - 1 that cannot be kept exactly; send it as a string.`,
      );
    }
  }
}

function textOk(s: string): boolean {
  return !C0.test(s) && s.isWellFormed();
}

function pathOf(frame: Frame, last: Segment): Segment[] {
  const segments: Segment[] = [last];
  for (let f: Frame | undefined = frame; f?.parent !== undefined; f = f.parent) segments.push(f.key);
  return segments.reverse();
}

// ---------------------------------------------------------------------------------------------
// Paths, on the error path only.

/**
 * The path of the value (or member name) at `offset` of a text, from a tolerant token scan up
 * to there: for errors found before JSON.parse (depth, numbers, UTF-8), at most MAX_DEPTH deep.
 */
function segmentsAt(text: string, offset: number): Segment[] {
  const stack: { array: boolean; key: Segment | undefined; expectKey: boolean }[] = [];
  for (let i = 0; i < offset && i < text.length; i++) {
    const c = text.charCodeAt(i);
    const top = stack[stack.length - 1];
    if (c === 0x22) {
      const end = stringEnd(text, i);
      const isKey = top !== undefined && !top.array && top.expectKey;
      if (end < 0 || end >= offset) {
        if (isKey) top.key = null;
        break;
      }
      if (isKey) {
        top.key = keyOf(text.slice(i, end + 1));
        top.expectKey = false;
      }
      i = end;
    } else if (c === 0x7b) {
      stack.push({ array: false, key: undefined, expectKey: true });
    } else if (c === 0x5b) {
      stack.push({ array: true, key: 0, expectKey: false });
    } else if (c === 0x7d || c === 0x5d) {
      stack.pop();
    } else if (c === 0x2c && top !== undefined) {
      if (top.array) top.key = (top.key as number) + 1;
      else {
        top.key = undefined;
        top.expectKey = true;
      }
    }
  }
  return stack.filter((f) => f.key !== undefined).map((f) => f.key as Segment);
}

function keyOf(token: string): Segment {
  try {
    return JSON.parse(token) as string;
  } catch {
    return null;
  }
}

/**
 * `order.reference`, `payment.split[2].percentage`: inside the envelope the path starts below the
 * operation (or at verification / version); outside it, the full path. A member name that is not
 * plain is shown as `*` (it is merchant input).
 */
export function render(path: readonly Segment[]): string {
  let segs = path;
  if (segs[0] === ENVELOPE && segs.length > 1) {
    const second = segs[1];
    segs = typeof second === 'string' && ENVELOPE_RESERVED.has(second) ? segs.slice(1) : segs.length === 2 ? segs.slice(1) : segs.slice(2);
  }
  let out = '';
  for (const s of segs) {
    if (typeof s === 'number') out += `[${s}]`;
    else out += (out === '' ? '' : '.') + (s !== null && showable(s) ? s : '*');
  }
  return out === '' ? 'body' : out;
}

function malformed(message: string): DomainError {
  return new DomainError('validation', ErrorCodes.MalformedBody, message);
}

/** Names the field holding the first byte that is not UTF-8. */
function invalidUtf8(raw: Uint8Array): DomainError {
  const at = firstInvalidUtf8(raw);
  const before = at > 0 ? decoder.decode(raw.subarray(0, at)) : '';
  const param = render(segmentsAt(before, before.length));
  return DomainError.validation(ErrorCodes.InvalidField, param, `${param} is not valid UTF-8 text; the body must be UTF-8.`);
}

/** Offset of the first byte that does not start a well-formed UTF-8 sequence (Unicode table 3-7). */
export function firstInvalidUtf8(b: Uint8Array): number {
  const n = b.length;
  let i = 0;
  while (i < n) {
    const c = b[i];
    if (c < 0x80) {
      i++;
      continue;
    }
    let need: number;
    let lo = 0x80;
    let hi = 0xbf;
    if (c >= 0xc2 && c <= 0xdf) need = 1;
    else if (c >= 0xe0 && c <= 0xef) {
      need = 2;
      if (c === 0xe0) lo = 0xa0;
      else if (c === 0xed) hi = 0x9f;
    } else if (c >= 0xf0 && c <= 0xf4) {
      need = 3;
      if (c === 0xf0) lo = 0x90;
      else if (c === 0xf4) hi = 0x8f;
    } else return i;
    if (i + need >= n) return i;
    if (b[i + 1] < lo || b[i + 1] > hi) return i;
    for (let k = 2; k <= need; k++) if (b[i + k] < 0x80 || b[i + k] > 0xbf) return i;
    i += need + 1;
  }
  return n;
}
