import type { FeeRate, MethodKind } from '@app/contracts';
import { mulDivRoundHalfUp } from './money';

/** docs/merchants/split.md 1: `F = round_half_up(G × rate / 1 000 000) + fixed`. */
export function processingFee(gross: number, rate: FeeRate): number {
  return mulDivRoundHalfUp(gross, rate.ratePpm, 1_000_000) + rate.fixed;
}

/** Fee plans are keyed by instalment band {1}, {2..6}, {7..12}; a band is named by its first count. */
export function instalmentBand(n: number): 1 | 2 | 7 {
  if (n <= 1) return 1;
  return n <= 6 ? 2 : 7;
}

/** Method 4 is debit; 1, 2 and 3 are credit (docs/merchants/sales.md). */
export function methodKind(method: number): MethodKind {
  return method === 4 ? 'debit' : 'credit';
}

/** docs/merchants/split.md 5: credit pays instalment k at D + 30·k days, debit at D + 1. Dates are UTC days. */
export function dueDates(capturedOn: string, kind: MethodKind, n: number): readonly string[] {
  // Settlement asks for the same few schedules all day long: formatting dates is most of the cost.
  const key = `${capturedOn}|${kind}|${n}`;
  let dates = DUE_DATES.get(key);
  if (!dates) {
    const day0 = Date.parse(`${capturedOn}T00:00:00Z`);
    dates = Object.freeze(
      Array.from({ length: n }, (_, i) => new Date(day0 + (kind === 'debit' ? 1 : 30 * (i + 1)) * 86_400_000).toISOString().slice(0, 10)),
    );
    if (DUE_DATES.size >= 1024) DUE_DATES.clear();
    DUE_DATES.set(key, dates);
  }
  return dates;
}

const DUE_DATES = new Map<string, readonly string[]>();
