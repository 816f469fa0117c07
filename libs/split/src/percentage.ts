const DECIMAL = /^(\d{1,3})(?:\.(\d+))?$/;

export type PercentageReading = { bp: number } | { error: 'precision' | 'range' };

/**
 * A percentage as decimal text into basis points ("12.5" → 1250), never through a float.
 * docs/merchants/split.md 1 and 3: more than 2 decimals is a precision error; outside 1..100 a range error.
 */
export function percentageToBp(text: string): PercentageReading {
  const m = DECIMAL.exec(text.trim());
  if (!m) return { error: 'range' };
  const [, whole, frac = ''] = m;
  // Trailing zeros carry no precision: "12.500" is 12.5.
  const significant = frac.replace(/0+$/, '');
  if (significant.length > 2) return { error: 'precision' };
  const bp = Number(whole) * 100 + Number(significant.padEnd(2, '0'));
  return bp < 100 || bp > 10_000 ? { error: 'range' } : { bp };
}

/**
 * A fee rate given in percent with up to 4 decimals ("2.99" → 29 900 ppm), for the operator CLI
 * and the default plan. Undefined when it is not such a number or is 100 % or more.
 */
export function percentToPpm(text: string): number | undefined {
  const m = /^(\d{1,2})(?:\.(\d{1,4}))?$/.exec(text.trim());
  if (!m) return undefined;
  return Number(m[1]) * 10_000 + Number((m[2] ?? '').padEnd(4, '0'));
}

/** 29 900 ppm → "2.99" (for display only). */
export function ppmToPercent(ppm: number): string {
  const whole = Math.floor(ppm / 10_000);
  const frac = String(ppm % 10_000)
    .padStart(4, '0')
    .replace(/0+$/, '');
  return frac ? `${whole}.${frac}` : String(whole);
}
