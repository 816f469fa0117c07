/**
 * Integer-cent arithmetic. Products of two amounts can pass 2^53 (a fee share is F × gᵢ / G), so
 * they are done in BigInt whenever the plain product would not be exact.
 */
export function mulDivFloor(a: number, b: number, d: number): number {
  const product = a * b;
  if (Number.isSafeInteger(product)) return Math.floor(product / d);
  return Number((BigInt(a) * BigInt(b)) / BigInt(d));
}

/** round_half_up(a × b / d) for non-negative integers (docs/merchants/split.md 1: the fee). */
export function mulDivRoundHalfUp(a: number, b: number, d: number): number {
  const product = a * b;
  if (Number.isSafeInteger(product * 2 + d)) return Math.floor((product * 2 + d) / (2 * d));
  return Number((BigInt(a) * BigInt(b) * 2n + BigInt(d)) / (2n * BigInt(d)));
}
