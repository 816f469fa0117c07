import { DomainError, ErrorCodes } from '@app/contracts';

/**
 * Liberal scalar reading (WIRE.md 1): merchants send numbers as JSON numbers or numeric strings
 * and flags as booleans or "true"/"false". Every reader names the field it failed on.
 */
export type Json = null | boolean | number | string | Json[] | { [k: string]: Json };
export type JsonObject = { [k: string]: Json };

export function isObject(v: unknown): v is JsonObject {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

function missing(path: string): DomainError {
  return DomainError.validation(ErrorCodes.MissingField, path, `${path} is required.`);
}

function invalid(path: string, what: string): DomainError {
  return DomainError.validation(ErrorCodes.InvalidField, path, `${path} ${what}.`);
}

function present(v: unknown): boolean {
  return v !== undefined && v !== null && v !== '';
}

export interface StringRule {
  max?: number;
  pattern?: RegExp;
  /** Sentence fragment used when the pattern does not match, e.g. "must be 6 digits (YYYYMM)". */
  patternHint?: string;
}

/** A text field; numbers are accepted and rendered as their decimal text. */
export function optionalString(obj: JsonObject, key: string, path: string, rule: StringRule = {}): string | undefined {
  const v = obj[key];
  if (!present(v)) return undefined;
  let s: string;
  if (typeof v === 'string') s = v;
  else if (typeof v === 'number' && Number.isFinite(v)) s = String(v);
  else throw invalid(path, 'must be a string');
  if (rule.max !== undefined && s.length > rule.max) throw invalid(path, `must be at most ${rule.max} characters`);
  if (rule.pattern && !rule.pattern.test(s)) throw invalid(path, rule.patternHint ?? 'has an invalid format');
  return s;
}

export function requiredString(obj: JsonObject, key: string, path: string, rule: StringRule = {}): string {
  const s = optionalString(obj, key, path, rule);
  if (s === undefined) throw missing(path);
  return s;
}

/**
 * An integer, given as a JSON number or as digits. Amounts are integer cents, so a decimal point
 * is an error rather than a guess ("10.00" could mean 1000 or 10).
 */
export function optionalInt(obj: JsonObject, key: string, path: string, min = 0, max = Number.MAX_SAFE_INTEGER): number | undefined {
  const v = obj[key];
  if (!present(v)) return undefined;
  let n: number;
  if (typeof v === 'number') {
    if (!Number.isSafeInteger(v)) throw invalid(path, 'must be a whole number (integer cents for amounts)');
    n = v;
  } else if (typeof v === 'string') {
    if (!/^-?\d{1,16}$/.test(v)) throw invalid(path, 'must be a whole number (integer cents for amounts)');
    n = Number(v);
    if (!Number.isSafeInteger(n)) throw invalid(path, 'is too large');
  } else {
    throw invalid(path, 'must be a whole number');
  }
  if (n < min || n > max) throw invalid(path, `must be from ${min} to ${max}`);
  return n;
}

export function requiredInt(obj: JsonObject, key: string, path: string, min = 0, max = Number.MAX_SAFE_INTEGER): number {
  const n = optionalInt(obj, key, path, min, max);
  if (n === undefined) throw missing(path);
  return n;
}

export function optionalBool(obj: JsonObject, key: string, path: string): boolean | undefined {
  const v = obj[key];
  if (!present(v)) return undefined;
  if (v === true || v === 'true') return true;
  if (v === false || v === 'false') return false;
  throw invalid(path, 'must be true or false');
}

export function optionalObject(obj: JsonObject, key: string, path: string): JsonObject | undefined {
  const v = obj[key];
  if (v === undefined || v === null) return undefined;
  if (!isObject(v)) throw invalid(path, 'must be an object');
  return v;
}

export function requiredObject(obj: JsonObject, key: string, path: string): JsonObject {
  const v = optionalObject(obj, key, path);
  if (v === undefined) throw missing(path);
  return v;
}

/** The first key of `keys` present in `obj` (aliases such as tokencard / tokenCard). */
export function firstKey(obj: JsonObject, keys: readonly string[]): string | undefined {
  return keys.find((k) => obj[k] !== undefined);
}
