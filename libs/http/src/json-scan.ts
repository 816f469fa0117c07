import { DomainError, ErrorCodes } from '@app/contracts';
import { render, segmentsAt, stringEnd } from './json-path';

// Step 2 of parseJsonBody (json-body.ts), before JSON.parse: a linear scan, no recursion, whatever the text is.

/** The deepest legitimate body nests about 7 containers (envelope → sale → payment → split → [i] → …). */
export const MAX_DEPTH = 16;

/**
 * Counts [ and { outside strings (a string ends at a quote preceded by an even number of
 * backslashes) and checks number literals. Not a validator: what is not JSON is left for
 * JSON.parse to refuse.
 */
export function scan(text: string): number[] {
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
export function asText(text: string, spans: number[]): string {
  let out = '';
  let from = 0;
  for (let k = 0; k < spans.length; k += 2) {
    out += `${text.slice(from, spans[k])}"${text.slice(spans[k], spans[k + 1])}"`;
    from = spans[k + 1];
  }
  return out + text.slice(from);
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
