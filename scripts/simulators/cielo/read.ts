/**
 * Cielo reads member names without regard to case: the official PHP SDK sends camelCase with many
 * `null` members, the manual shows PascalCase. A request body is read through `lowerKeys` once.
 */
export type Loose = Record<string, unknown>;

/** A copy of `v` whose object member names are lower case (arrays and scalars kept). */
export function lowerKeys(v: unknown): unknown {
  if (Array.isArray(v)) return v.map(lowerKeys);
  if (v === null || typeof v !== 'object') return v;
  const out: Loose = {};
  for (const [k, x] of Object.entries(v as Loose)) out[k.toLowerCase()] = lowerKeys(x);
  return out;
}

/** The member as an object, or undefined (null, absent or a scalar). */
export function obj(v: unknown, key: string): Loose | undefined {
  const x = (v as Loose | undefined)?.[key];
  return x !== null && typeof x === 'object' && !Array.isArray(x) ? (x as Loose) : undefined;
}

/** The member as a trimmed non-empty string (numbers written as text), or undefined. */
export function str(v: unknown, key: string): string | undefined {
  const x = (v as Loose | undefined)?.[key];
  if (typeof x === 'number') return String(x);
  if (typeof x !== 'string') return undefined;
  const t = x.trim();
  return t === '' ? undefined : t;
}

/** The member as a number (a numeric string too), or undefined; NaN when present but not numeric. */
export function num(v: unknown, key: string): number | undefined {
  const x = (v as Loose | undefined)?.[key];
  if (x === null || x === undefined || x === '') return undefined;
  if (typeof x === 'number') return x;
  if (typeof x === 'string' && /^-?\d+$/.test(x.trim())) return Number(x);
  return NaN;
}

/** The member as a boolean (`true`, `"true"`); false otherwise. */
export function bool(v: unknown, key: string): boolean {
  const x = (v as Loose | undefined)?.[key];
  return x === true || (typeof x === 'string' && x.toLowerCase() === 'true');
}
