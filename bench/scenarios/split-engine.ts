import { randomUUID } from 'node:crypto';
import type { SplitEntryInput } from '@app/contracts';
import { computeSplit, payableCells, processingFee, validateSplit } from '@app/split';
import { Figure } from '../lib/scenario';

/**
 * The split engine alone, in this process (no stack): what the API pays to validate a split and
 * settlement to turn it into payables, per sale. One iteration = validateSplit + computeSplit +
 * payableCells for a 10-entry split over 12 credit instalments, the most the API accepts by default.
 */
const merchantId = randomUUID();
const r = Array.from({ length: 10 }, () => randomUUID());
const recipients = new Map(r.map((id) => [id, 'approved' as const]));
const entry = (e: Partial<SplitEntryInput>): SplitEntryInput => ({
  liable: true,
  chargeProcessingFee: false,
  chargeRecipientProcessingFee: false,
  isGrossAmount: false,
  ...e,
});
// Every mode the engine has bar FULL (which excludes PRORATA): 49.58 % in percentages and 107.33
// in fixed amounts, so any gross from 500.00 up leaves the merchant a residual that covers its fee.
const SPLIT: SplitEntryInput[] = [
  entry({ recipient: r[0], percentage: '20', chargeProcessingFee: true }), // PRORATA
  entry({ recipient: r[1], percentage: '12.5', chargeProcessingFee: true }), // PRORATA
  entry({ recipient: r[2], percentage: '7.25' }), // FREE
  entry({ recipient: r[3], amount: 5000, chargeProcessingFee: true }), // NET_AMOUNT
  entry({ recipient: r[4], amount: 2500, liable: false }), // FREE
  entry({ recipient: r[5], percentage: '5', chargeProcessingFee: true, isGrossAmount: true }), // PRORATA
  entry({ recipient: r[6], amount: 1999, chargeProcessingFee: true, isGrossAmount: true }), // PRORATA
  entry({ recipient: r[7], percentage: '3.33', liable: false }), // FREE
  entry({ recipient: r[8], amount: 1234, chargeProcessingFee: true }), // NET_AMOUNT
  entry({ recipient: r[9], percentage: '1.5', chargeProcessingFee: true }), // PRORATA
];
const INSTALMENTS = 12;
const CELLS = SPLIT.length * INSTALMENTS;

// Varying gross amounts (500.00 to ~50 000.00), so no branch or BigInt path is always cold;
// the fee as settlement would charge it for 12 credit instalments (2.99 % + 0.49).
const SAMPLES = 1024;
const grosses = Array.from({ length: SAMPLES }, (_, i) => 50_000 + ((i * 7_919_137) % 4_950_000));
const fees = grosses.map((g) => processingFee(g, { ratePpm: 29_900, fixed: 49 }));

function engineIteration(i: number): number {
  const k = i % SAMPLES;
  const ctx = { gross: grosses[k], fee: fees[k], merchantId, recipients, maxEntries: 10 };
  if (validateSplit(SPLIT, ctx).length) throw new Error('the bench split is invalid');
  const cells = payableCells(computeSplit(SPLIT, ctx.gross, ctx.fee), INSTALMENTS, 'credit', '2026-11-23');
  return cells[cells.length - 1].net; // used, so the work cannot be optimized away
}

// The baseline: the bare arithmetic of the same output, 10 × 12 precomputed integers per sale
// summed into a fresh 120-cell array, so the ratio is the engine's cost over plain integer work.
const rows = grosses.map((g) => Array.from({ length: CELLS }, (_, c) => Math.floor(g / INSTALMENTS) + c));
function baselineIteration(i: number): number {
  const row = rows[i % SAMPLES];
  const cells = new Array<number>(CELLS);
  for (let c = 0; c < CELLS; c++) cells[c] = row[c] + row[CELLS - 1 - c];
  return cells[i % CELLS];
}

/** Iterations per second of `iteration`, run for `seconds` (the clock is read every 256 runs). */
function rate(iteration: (i: number) => number, seconds: number): number {
  let n = 0;
  let sink = 0;
  const start = performance.now();
  let now = start;
  while (now - start < seconds * 1000) {
    for (let k = 0; k < 256; k++) sink += iteration(n++);
    now = performance.now();
  }
  if (sink === Number.MIN_VALUE) process.stdout.write(''); // keeps `sink` alive
  return n / ((now - start) / 1000);
}

export function benchSplitEngine(durationS: number, warmupS: number): Figure {
  grosses.forEach((gross, k) => {
    const problems = validateSplit(SPLIT, { gross, fee: fees[k], merchantId, recipients, maxEntries: 10 });
    if (problems.length) throw new Error(`the bench split is invalid for ${gross} cents: ${JSON.stringify(problems)}`);
  });
  // Warm-up of both loops first: JIT, so both figures are steady state.
  rate(engineIteration, warmupS);
  rate(baselineIteration, warmupS);
  const value = rate(engineIteration, durationS);
  const baseline = rate(baselineIteration, durationS);
  return { name: 'split engine (10 entries × 12 instalments)', unit: 'splits/s', value, baseline, target: 50_000 };
}
