// The paths parseJsonBody's refusals name (json-body.ts), as the merchant knows the field; on the error path only.

const ENVELOPE = 'transaction-request';
const ENVELOPE_RESERVED = new Set(['version', 'verification']);
// A member name is shown only when plain, and never with 8 digits or more in it (dashes or not):
// it could be a card number.
const PLAIN_KEY = /^[A-Za-z0-9_-]{1,64}$/;
const showable = (s: string) => PLAIN_KEY.test(s) && s.replace(/\D/g, '').length < 8;

/** A step of a path: a member name, an array index, or null for a member name not fit to show. */
export type Segment = string | number | null;

/** Index of the quote closing the string opened at `start`, or -1 when it is not closed. */
export function stringEnd(text: string, start: number): number {
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

/**
 * The path of the value (or member name) at `offset` of a text, from a tolerant token scan up
 * to there: for errors found before JSON.parse (depth, numbers, UTF-8), at most MAX_DEPTH deep.
 */
export function segmentsAt(text: string, offset: number): Segment[] {
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
