import fc from 'fast-check';
import { FeeRate, MethodKind, SplitEntryInput, SplitErrorCodes, SplitResult } from '@app/contracts';
import { cancellationDebits, chargebackDebits, MERCHANT, payableCells } from './adjustments';
import { processingFee } from './fees';
import { computeSplit, SplitContext, validateSplit } from './split-engine';

/**
 * docs/merchants/split.md 8: invariants over random splits. Splits that do not validate are skipped (fc.pre),
 * and each property checks that enough of what it generated was valid to mean something.
 */

const RUNS = 3_000;
const MAX_ENTRIES = 10;
const RECIPIENTS = Array.from({ length: MAX_ENTRIES }, (_, i) => `r${i + 1}`);
const APPROVED = new Map<string, 'pending' | 'approved'>(RECIPIENTS.map((r) => [r, 'approved']));

interface Case {
  gross: number;
  rate: FeeRate;
  fee: number;
  instalments: number;
  kind: MethodKind;
  entries: SplitEntryInput[];
  /** Sort keys for a permutation of the entries. */
  keys: number[];
}

const U = 1_000_000;

const rawEntry = fc.record({
  byPercentage: fc.boolean(),
  liable: fc.boolean(),
  cpf: fc.boolean(),
  crpf: fc.boolean(),
  ig: fc.boolean(),
  u: fc.integer({ min: 0, max: U }),
  decimals: fc.constantFrom(0, 1, 2),
  trailingZero: fc.boolean(),
});
type RawEntry = typeof rawEntry extends fc.Arbitrary<infer T> ? T : never;

/** Decimal text of `bp` basis points with `decimals` decimals (bp already a multiple of 10^(2-decimals)). */
function percentText(bp: number, decimals: number, trailingZero: boolean): string {
  const whole = String(Math.floor(bp / 100));
  const frac = String(bp % 100)
    .padStart(2, '0')
    .slice(0, decimals);
  const shown = trailingZero && decimals < 2 ? `${frac}0` : frac;
  return shown ? `${whole}.${shown}` : whole;
}

const caseArb: fc.Arbitrary<Case> = fc
  .record({
    // any amount, or a round one (so that percentage slices can add up to exactly G)
    gross: fc.oneof(
      fc.integer({ min: 1, max: 10_000_000 }),
      fc.integer({ min: 1, max: 1_000 }).map((x) => x * 10_000),
    ),
    ratePpm: fc.integer({ min: 0, max: 100_000 }),
    fixed: fc.integer({ min: 0, max: 500 }),
    instalments: fc.integer({ min: 1, max: 12 }),
    debit: fc.boolean(),
    raw: fc.array(rawEntry, { minLength: 1, maxLength: MAX_ENTRIES }),
    // random flags as drawn / no FULL entry / exactly one FULL entry and no PRORATA one / all PRORATA
    policy: fc.constantFrom('random', 'noFull', 'oneFull', 'allProrata'),
    // make the last entry take what is left of the sale (merchant gross 0)
    fill: fc.boolean(),
    // now and then every entry the largest equal share (ties for the principal fee payer)
    equal: fc.integer({ min: 0, max: 4 }).map((x) => x === 0),
    fullAt: fc.nat(),
    keys: fc.array(fc.nat(), { minLength: MAX_ENTRIES, maxLength: MAX_ENTRIES }),
  })
  .map(({ gross, ratePpm, fixed, instalments, debit, raw: drawn, policy, fill, equal, fullAt, keys }) => {
    const raw = equal ? drawn.map((r) => ({ ...r, byPercentage: drawn[0].byPercentage, u: U, decimals: 2 as const })) : drawn;
    const m = raw.length;
    const bpCap = Math.floor(10_000 / m);
    const amountCap = Math.max(1, Math.floor(gross / m));
    const flags = raw.map((r, i): RawEntry => {
      if (policy === 'noFull' && !r.cpf) return { ...r, crpf: false };
      if (policy === 'oneFull') {
        if (i === fullAt % m) return { ...r, cpf: false, crpf: true };
        const netAmount = !r.byPercentage && r.cpf && !r.ig;
        return netAmount ? r : { ...r, cpf: false, crpf: false };
      }
      if (policy === 'allProrata') return { ...r, cpf: true, ig: r.byPercentage ? r.ig : true };
      return r;
    });
    const entries: SplitEntryInput[] = flags.map((r, i) => {
      const base = {
        recipient: RECIPIENTS[i],
        liable: r.liable,
        chargeProcessingFee: r.cpf,
        chargeRecipientProcessingFee: r.crpf,
        isGrossAmount: r.ig,
      };
      if (!r.byPercentage) return { ...base, amount: 1 + Math.floor((r.u * (amountCap - 1)) / U) };
      const step = 10 ** (2 - r.decimals);
      const bp = Math.max(100, Math.floor((100 + Math.floor((r.u * (bpCap - 100)) / U)) / step) * step);
      return { ...base, percentage: percentText(bp, r.decimals, r.trailingZero) };
    });
    if (fill && !equal) {
      const last = entries[m - 1];
      const others = entries.slice(0, -1);
      if (last.amount !== undefined) {
        const taken = computeSplit(others, gross, 0).entries.reduce((s, e) => s + e.gross, 0);
        if (gross - taken >= 1) entries[m - 1] = { ...last, amount: gross - taken };
      } else if (others.every((e) => e.percentage !== undefined)) {
        const bp = others.reduce((s, e) => s + Math.round(Number(e.percentage) * 100), 0);
        if (10_000 - bp >= 100) entries[m - 1] = { ...last, percentage: percentText(10_000 - bp, 2, false) };
      }
    }
    const rate = { ratePpm, fixed };
    return {
      gross,
      rate,
      fee: processingFee(gross, rate),
      instalments: debit ? 1 : instalments,
      kind: debit ? 'debit' : 'credit',
      entries,
      keys,
    };
  });

const ctxOf = (c: Case): SplitContext => ({ gross: c.gross, fee: c.fee, merchantId: 'm1', recipients: APPROVED, maxEntries: MAX_ENTRIES });

interface Stats {
  tried: number;
  valid: number;
}
const newStats = (): Stats => ({ tried: 0, valid: 0 });

/** The split of a case that validates; skips the run otherwise. */
function validSplit(c: Case, stats: Stats): SplitResult {
  stats.tried++;
  fc.pre(validateSplit(c.entries, ctxOf(c)).length === 0);
  stats.valid++;
  return computeSplit(c.entries, c.gross, c.fee);
}

/** Run a property over valid splits and check a reasonable share of the draws were valid. */
function assertOverValid(property: (c: Case, stats: Stats) => void, runs = RUNS) {
  const stats = newStats();
  fc.assert(
    fc.property(caseArb, (c) => property(c, stats)),
    { numRuns: runs, maxSkipsPerRun: 10 },
  );
  expect(stats.valid / stats.tried).toBeGreaterThan(0.3);
}

/**
 * A plain check: jest's expect is too slow for thousands of cells per run. A failure throws, and
 * fast-check reports it with the (shrunk) counterexample.
 */
function must(ok: boolean, what: () => string): void {
  if (!ok) throw new Error(what());
}

const parties = (r: SplitResult) => [r.merchant, ...r.entries];
const sum = (xs: number[]) => xs.reduce((s, x) => s + x, 0);
const show = (x: unknown) => JSON.stringify(x);

describe('the generator', () => {
  it('reaches every mode, the principal fee payer (with ties), a merchant gross of 0, 10 entries and instalments', () => {
    const seen = {
      FREE: 0,
      FULL: 0,
      PRORATA: 0,
      NET_AMOUNT: 0,
      principal: 0,
      principalTie: 0,
      merchantZero: 0,
      tenEntries: 0,
      instalments: 0,
      twoDecimals: 0,
    };
    for (const c of fc.sample(caseArb, { numRuns: 2_000, seed: 42 })) {
      if (validateSplit(c.entries, ctxOf(c)).length) continue;
      const r = computeSplit(c.entries, c.gross, c.fee);
      for (const e of r.entries) seen[e.mode]++;
      const prorata = r.entries.filter((e) => e.mode === 'PRORATA');
      if (prorata.length && sum(prorata.map((e) => e.gross)) === c.gross) {
        seen.principal++;
        const top = Math.max(...prorata.map((e) => e.gross));
        if (prorata.filter((e) => e.gross === top).length > 1) seen.principalTie++;
      }
      if (r.merchant.gross === 0) seen.merchantZero++;
      if (c.entries.length === MAX_ENTRIES) seen.tenEntries++;
      if (c.instalments > 1) seen.instalments++;
      if (c.entries.some((e) => /\.\d\d$/.test(e.percentage ?? ''))) seen.twoDecimals++;
    }
    for (const [what, n] of Object.entries(seen)) expect([what, n >= 20]).toEqual([what, true]);
  });
});

describe('docs/merchants/split.md 8: invariants of random valid splits', () => {
  it('(1) Σnetᵢ + net_M + F = G, Σgᵢ + g_M = G, Σfᵢ + f_M = F, and netᵢ = gᵢ − fᵢ', () => {
    assertOverValid((c, stats) => {
      const r = validSplit(c, stats);
      const ps = parties(r);
      expect({ gross: r.gross, fee: r.fee }).toEqual({ gross: c.gross, fee: c.fee });
      expect({
        net: sum(ps.map((p) => p.net)) + c.fee,
        gross: sum(ps.map((p) => p.gross)),
        fee: sum(ps.map((p) => p.fee)),
      }).toEqual({ net: c.gross, gross: c.gross, fee: c.fee });
      for (const p of ps) must(p.net === p.gross - p.fee, () => `net ≠ gross − fee: ${show(p)}`);
    });
  });

  it('(2) no negative gross, fee or net cell in the split or its payables', () => {
    assertOverValid((c, stats) => {
      const r = validSplit(c, stats);
      for (const p of parties(r)) must(Math.min(p.gross, p.fee, p.net) >= 0, () => `negative share ${show(p)}`);
      for (const x of payableCells(r, c.instalments, c.kind, '2024-01-31'))
        must(Math.min(x.gross, x.fee, x.net) >= 0, () => `negative cell ${show(x)}`);
    });
  });

  it('(3) FREE and NET_AMOUNT entries: fee 0, net = gross slice (the amount itself for amounts)', () => {
    assertOverValid((c, stats) => {
      const r = validSplit(c, stats);
      r.entries.forEach((e, i) => {
        if (e.mode !== 'FREE' && e.mode !== 'NET_AMOUNT') return;
        must(e.fee === 0 && e.net === e.gross, () => `${e.mode} entry ${i} pays a fee: ${show(e)}`);
        const amount = c.entries[i].amount;
        must(amount === undefined || e.net === amount, () => `${e.mode} entry ${i} nets ${e.net}, not its amount ${amount}`);
      });
    });
  });

  it('(4) instalment cells sum to their party totals, gross cell = fee cell + net cell, remainder on instalment 1, due dates', () => {
    const day = 86_400_000;
    const captured = Date.UTC(2024, 0, 31);
    assertOverValid((c, stats) => {
      const r = validSplit(c, stats);
      const n = c.instalments;
      const cells = payableCells(r, n, c.kind, '2024-01-31');
      const names = [MERCHANT, ...r.entries.map((e) => e.recipient)];
      must(cells.length === names.length * n, () => `${cells.length} cells for ${names.length} parties × ${n}`);
      const dates = Array.from({ length: n }, (_, k) =>
        new Date(captured + (c.kind === 'debit' ? 1 : 30 * (k + 1)) * day).toISOString().slice(0, 10),
      );
      names.forEach((name, i) => {
        const total = parties(r)[i];
        const mine = cells.filter((x) => x.party === name);
        const got = { gross: sum(mine.map((x) => x.gross)), fee: sum(mine.map((x) => x.fee)), net: sum(mine.map((x) => x.net)) };
        must(
          got.gross === total.gross && got.fee === total.fee && got.net === total.net,
          () => `${name}: cells add up to ${show(got)}, totals ${show(total)}`,
        );
        mine.forEach((x, k) => {
          must(x.instalment === k + 1 && x.dueDate === dates[k], () => `${name} instalment ${k + 1}: ${show(x)}, due ${dates[k]}`);
          must(x.gross === x.fee + x.net, () => `${name}: gross cell ≠ fee + net ${show(x)}`);
          // floor(x/n) on every instalment, x mod n on top on the first.
          const fee = Math.floor(total.fee / n) + (k === 0 ? total.fee % n : 0);
          const net = Math.floor(total.net / n) + (k === 0 ? total.net % n : 0);
          must(x.fee === fee && x.net === net, () => `${name} instalment ${k + 1}: ${show(x)}, expected fee ${fee} net ${net}`);
        });
      });
    });
  });
});

describe('docs/merchants/split.md 8 (5): cancellations and chargebacks', () => {
  /** Cumulative amounts strictly between 0 and G (as fractions u/U of G), ascending. */
  const cutsArb = fc.array(fc.integer({ min: 1, max: U - 1 }), { maxLength: 6 });
  const cumulative = (gross: number, us: number[]) =>
    [...new Set(us.map((u) => Math.floor((gross * u) / U)))].filter((x) => x > 0 && x < gross).sort((a, b) => a - b);

  it('partial cancels ending in a full cancel: each sums to its amount, recipients never negative, each party debited its gross slice', () => {
    const stats = newStats();
    fc.assert(
      fc.property(caseArb, cutsArb, (c, us) => {
        const r = validSplit(c, stats);
        const steps = [0, ...cumulative(c.gross, us), c.gross];
        const total = new Map<string, number>();
        for (let k = 1; k < steps.length; k++) {
          const ds = cancellationDebits(r, steps[k - 1], steps[k]);
          must(sum(ds.map((d) => d.amount)) === steps[k] - steps[k - 1], () => `cancel ${steps[k - 1]}→${steps[k]} debits ${show(ds)}`);
          for (const d of ds) {
            must(d.party === MERCHANT || d.amount >= 0, () => `cancel ${steps[k - 1]}→${steps[k]} credits recipient ${show(d)}`);
            total.set(d.party, (total.get(d.party) ?? 0) + d.amount);
          }
        }
        expect([MERCHANT, ...r.entries.map((e) => e.recipient)].map((p) => total.get(p) ?? 0)).toEqual(parties(r).map((p) => p.gross));
        expect(total.size).toBeLessThanOrEqual(r.entries.length + 1);
      }),
      { numRuns: RUNS, maxSkipsPerRun: 10 },
    );
    expect(stats.valid / stats.tried).toBeGreaterThan(0.3);
  });

  it('chargebacks: each sums to its amount, only liable entries are debited (the merchant only when none is liable)', () => {
    const stats = newStats();
    fc.assert(
      fc.property(caseArb, cutsArb, fc.boolean(), (c, us, toFull) => {
        const r = validSplit(c, stats);
        const steps = [0, ...cumulative(c.gross, us), ...(toFull ? [c.gross] : [])];
        const liable = new Set(r.entries.filter((e) => e.liable).map((e) => e.recipient));
        for (let k = 1; k < steps.length; k++) {
          const ds = chargebackDebits(r, steps[k - 1], steps[k]);
          must(sum(ds.map((d) => d.amount)) === steps[k] - steps[k - 1], () => `chargeback ${steps[k - 1]}→${steps[k]} debits ${show(ds)}`);
          for (const d of ds) {
            const ok = liable.size ? liable.has(d.party) : d.party === MERCHANT;
            must(ok, () => `chargeback ${steps[k - 1]}→${steps[k]} debits ${d.party}, liable: ${show([...liable])}`);
          }
        }
      }),
      { numRuns: RUNS, maxSkipsPerRun: 10 },
    );
    expect(stats.valid / stats.tried).toBeGreaterThan(0.3);
  });
});

describe('docs/merchants/split.md 8 (6): determinism and order', () => {
  it('same input → same cents (split, payables, debits), on a deep copy too', () => {
    assertOverValid((c, stats) => {
      const r = validSplit(c, stats);
      const copy: SplitEntryInput[] = JSON.parse(JSON.stringify(c.entries));
      const again = computeSplit(copy, c.gross, c.fee);
      expect(again).toEqual(r);
      expect(payableCells(again, c.instalments, c.kind, '2024-01-31')).toEqual(payableCells(r, c.instalments, c.kind, '2024-01-31'));
      const half = Math.floor(c.gross / 2);
      expect(cancellationDebits(again, 0, half)).toEqual(cancellationDebits(r, 0, half));
      expect(chargebackDebits(again, 0, half)).toEqual(chargebackDebits(r, 0, half));
    }, 1_000);
  });

  it('permuting entries moves at most the tie cents (≤ number of entries per party) and keeps every total', () => {
    assertOverValid((c, stats) => {
      const m = c.entries.length;
      const order = Array.from({ length: m }, (_, i) => i).sort((a, b) => c.keys[a] - c.keys[b] || a - b);
      const permuted = order.map((i) => c.entries[i]);
      const codes = (es: SplitEntryInput[]) =>
        validateSplit(es, ctxOf(c))
          .map((p) => p.code)
          .sort();
      expect(codes(permuted)).toEqual(codes(c.entries));

      const r = validSplit(c, stats);
      const p = computeSplit(permuted, c.gross, c.fee);
      expect({
        gross: p.gross,
        fee: p.fee,
        net: sum(parties(p).map((x) => x.net)),
        fees: sum(parties(p).map((x) => x.fee)),
        merchantGross: p.merchant.gross,
      }).toEqual({
        gross: r.gross,
        fee: r.fee,
        net: sum(parties(r).map((x) => x.net)),
        fees: c.fee,
        merchantGross: r.merchant.gross,
      });
      must(Math.abs(p.merchant.fee - r.merchant.fee) <= m, () => `merchant fee ${r.merchant.fee} → ${p.merchant.fee}`);
      const mine = new Map(p.entries.map((e) => [e.recipient, e]));
      for (const e of r.entries) {
        const q = mine.get(e.recipient)!;
        must(q.mode === e.mode && q.gross === e.gross, () => `${e.recipient}: ${show(e)} → ${show(q)}`);
        must(
          Math.abs(q.fee - e.fee) <= m && Math.abs(q.net - e.net) <= m,
          () => `${e.recipient} moved more than ${m} cents: ${show(e)} → ${show(q)}`,
        );
      }
    });
  });
});

describe('validateSplit on junk', () => {
  const junkEntry: fc.Arbitrary<SplitEntryInput> = fc.record(
    {
      recipient: fc.oneof(fc.string(), fc.constantFrom('', '  ', 'r1', 'R1 ', 'r2', 'm1', 'M1', 'p1', 'zz')),
      liable: fc.boolean(),
      chargeProcessingFee: fc.boolean(),
      chargeRecipientProcessingFee: fc.boolean(),
      isGrossAmount: fc.boolean(),
      percentage: fc.oneof(
        fc.string(),
        fc.stringMatching(/^-?\d{0,4}(\.\d{0,4})?$/),
        fc.constantFrom('', ' ', '100', '100.00', '0', '1e2', 'NaN', '12,5', '.5', '5.', '+5', ' 12.5 ', '99999999999999999999'),
      ),
      amount: fc.oneof(
        fc.integer({ min: -10_000_000, max: 20_000_000 }),
        fc.double(),
        fc.constantFrom(0, -1, Number.MAX_SAFE_INTEGER, Number.MAX_SAFE_INTEGER + 2, 1e300, Infinity, -Infinity, NaN, 0.5),
      ),
    },
    { requiredKeys: ['liable', 'chargeProcessingFee', 'chargeRecipientProcessingFee', 'isGrossAmount'] },
  );
  const codes = new Set<string>(Object.values(SplitErrorCodes));

  it('never throws, and reports only known codes with a parameter', () => {
    fc.assert(
      fc.property(
        fc.array(junkEntry, { maxLength: 14 }),
        fc.integer({ min: 1, max: 10_000_000 }),
        fc.integer({ min: 0, max: 10_000_000 }),
        (entries, gross, fee) => {
          const recipients = new Map<string, 'pending' | 'approved'>([
            ['r1', 'approved'],
            ['r2', 'approved'],
            ['p1', 'pending'],
          ]);
          const problems = validateSplit(entries, { gross, fee, merchantId: 'm1', recipients, maxEntries: MAX_ENTRIES });
          for (const p of problems) {
            expect(codes.has(p.code)).toBe(true);
            expect(p.parameter).toMatch(/^payment\.(split|amount)/);
          }
          if (problems.length === 0) {
            const r = computeSplit(entries, gross, fee);
            expect(sum(parties(r).map((x) => x.net)) + fee).toBe(gross);
            for (const x of parties(r)) expect(Math.min(x.gross, x.fee, x.net)).toBeGreaterThanOrEqual(0);
          }
        },
      ),
      { numRuns: RUNS },
    );
  });
});
