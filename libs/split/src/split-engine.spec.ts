import { FeeRate, SplitEntryInput, SplitErrorCodes, SplitMode, SplitResult } from '@app/contracts';
import { cancellationDebits, chargebackDebits, MERCHANT, payableCells } from './adjustments';
import { processingFee } from './fees';
import { percentageToBp } from './percentage';
import { computeSplit, entryMode, SplitContext, validateSplit } from './split-engine';

/** docs/merchants/split.md 9: the fee plan of the worked examples. */
const VISA_CREDIT_1X: FeeRate = { ratePpm: 29_900, fixed: 0 };
const MASTERCARD_CREDIT_1X: FeeRate = { ratePpm: 31_900, fixed: 30 };

type Flags = Partial<Pick<SplitEntryInput, 'liable' | 'chargeProcessingFee' | 'chargeRecipientProcessingFee' | 'isGrossAmount'>>;

/** An entry with the docs/merchants/split.md 1 defaults (flags false, liable true) unless given. */
function entry(recipient: string | undefined, value: { percentage?: string; amount?: number }, flags: Flags = {}): SplitEntryInput {
  return {
    recipient,
    liable: true,
    chargeProcessingFee: false,
    chargeRecipientProcessingFee: false,
    isGrossAmount: false,
    ...flags,
    ...value,
  };
}
const pct = (recipient: string | undefined, percentage: string, flags: Flags = {}) => entry(recipient, { percentage }, flags);
const amt = (recipient: string | undefined, amount: number, flags: Flags = {}) => entry(recipient, { amount }, flags);
const CPF: Flags = { chargeProcessingFee: true };
const CRPF: Flags = { chargeRecipientProcessingFee: true };
const CPF_IG: Flags = { chargeProcessingFee: true, isGrossAmount: true };

/** gross / fee / net, as docs/merchants/split.md 9 writes them. */
type Cells = [gross: number, fee: number, net: number];
const cells = (p: { gross: number; fee: number; net: number }): Cells => [p.gross, p.fee, p.net];

describe('docs/merchants/split.md 9: worked examples', () => {
  interface Golden {
    name: string;
    rate: FeeRate;
    gross: number;
    fee: number;
    entries: SplitEntryInput[];
    expected: { recipient: string; mode: SplitMode; cells: Cells }[];
    merchant: Cells;
  }
  const golden: Golden[] = [
    {
      name: '1. visa 1x, G 10 000: R1 10 % FREE',
      rate: VISA_CREDIT_1X,
      gross: 10_000,
      fee: 299,
      entries: [pct('r1', '10')],
      expected: [{ recipient: 'r1', mode: 'FREE', cells: [1_000, 0, 1_000] }],
      merchant: [9_000, 299, 8_701],
    },
    {
      name: '2. mastercard 1x, G 12 345: A and B 33.33 % cpf',
      rate: MASTERCARD_CREDIT_1X,
      gross: 12_345,
      fee: 424,
      entries: [pct('a', '33.33', CPF), pct('b', '33.33', CPF)],
      expected: [
        { recipient: 'a', mode: 'PRORATA', cells: [4_114, 141, 3_973] },
        { recipient: 'b', mode: 'PRORATA', cells: [4_114, 141, 3_973] },
      ],
      merchant: [4_117, 142, 3_975],
    },
    {
      name: '3. visa 1x, G 10 000: A and B 50 % cpf, fee remainder to the principal fee payer (tie → earliest)',
      rate: VISA_CREDIT_1X,
      gross: 10_000,
      fee: 299,
      entries: [pct('a', '50', CPF), pct('b', '50', CPF)],
      expected: [
        { recipient: 'a', mode: 'PRORATA', cells: [5_000, 150, 4_850] },
        { recipient: 'b', mode: 'PRORATA', cells: [5_000, 149, 4_851] },
      ],
      merchant: [0, 0, 0],
    },
    {
      name: '4. visa 1x, G 20 000: S 80 % crpf (FULL), P 5 % FREE',
      rate: VISA_CREDIT_1X,
      gross: 20_000,
      fee: 598,
      entries: [pct('s', '80', CRPF), pct('p', '5')],
      expected: [
        { recipient: 's', mode: 'FULL', cells: [16_000, 598, 15_402] },
        { recipient: 'p', mode: 'FREE', cells: [1_000, 0, 1_000] },
      ],
      merchant: [3_000, 0, 3_000],
    },
    {
      name: '5. mastercard 1x, G 15 000: X 6 000 cpf+ig, Y 4 000 cpf (NET_AMOUNT), Z 1 500 FREE',
      rate: MASTERCARD_CREDIT_1X,
      gross: 15_000,
      fee: 509,
      entries: [amt('x', 6_000, CPF_IG), amt('y', 4_000, CPF), amt('z', 1_500)],
      expected: [
        { recipient: 'x', mode: 'PRORATA', cells: [6_000, 203, 5_797] },
        { recipient: 'y', mode: 'NET_AMOUNT', cells: [4_000, 0, 4_000] },
        { recipient: 'z', mode: 'FREE', cells: [1_500, 0, 1_500] },
      ],
      merchant: [3_500, 306, 3_194],
    },
  ];

  it.each(golden)('$name', ({ rate, gross, fee, entries, expected, merchant }) => {
    const F = processingFee(gross, rate);
    expect(F).toBe(fee);

    const approved = new Map(entries.map((e) => [e.recipient!, 'approved' as const]));
    expect(validateSplit(entries, { gross, fee: F, merchantId: 'm1', recipients: approved, maxEntries: 10 })).toEqual([]);

    const r = computeSplit(entries, gross, F);
    expect(r.gross).toBe(gross);
    expect(r.fee).toBe(fee);
    expect(r.entries.map((e) => ({ recipient: e.recipient, mode: e.mode, cells: cells(e) }))).toEqual(expected);
    expect(entries.map(entryMode)).toEqual(expected.map((e) => e.mode));
    expect(cells(r.merchant)).toEqual(merchant);
  });
});

describe('docs/merchants/split.md 2: mode of every flag combination', () => {
  // G 10 000, F 299, a 20 % / 2 000-cent entry: PRORATA pays floor(299 × 2 000 / 10 000) = 59.
  const G = 10_000;
  const F = 299;
  const feeOf: Record<SplitMode, { entry: number; merchant: number }> = {
    FREE: { entry: 0, merchant: 299 },
    FULL: { entry: 299, merchant: 0 },
    PRORATA: { entry: 59, merchant: 240 },
    NET_AMOUNT: { entry: 0, merchant: 299 },
  };
  const modeOf = (cpf: boolean, crpf: boolean, ig: boolean, kind: 'percentage' | 'amount'): SplitMode => {
    if (!cpf) return crpf ? 'FULL' : 'FREE';
    if (kind === 'percentage' || ig) return 'PRORATA';
    return 'NET_AMOUNT';
  };
  const cases = (['percentage', 'amount'] as const).flatMap((kind) =>
    [false, true].flatMap((cpf) =>
      [false, true].flatMap((crpf) => [false, true].map((ig) => ({ kind, cpf, crpf, ig, mode: modeOf(cpf, crpf, ig, kind) }))),
    ),
  );

  it('covers the 16 combinations', () => expect(cases).toHaveLength(16));

  it.each(cases)('$kind entry, cpf=$cpf crpf=$crpf ig=$ig → $mode', ({ kind, cpf, crpf, ig, mode }) => {
    const flags: Flags = { chargeProcessingFee: cpf, chargeRecipientProcessingFee: crpf, isGrossAmount: ig };
    const e = kind === 'percentage' ? pct('r1', '20', flags) : amt('r1', 2_000, flags);
    expect(entryMode(e)).toBe(mode);

    const r = computeSplit([e], G, F);
    expect(r.entries[0].mode).toBe(mode);
    expect(cells(r.entries[0])).toEqual([2_000, feeOf[mode].entry, 2_000 - feeOf[mode].entry]);
    expect(cells(r.merchant)).toEqual([8_000, feeOf[mode].merchant, 8_000 - feeOf[mode].merchant]);
  });
});

describe('docs/merchants/split.md 5: payables per party and instalment', () => {
  // Example 2: A and B 4 114 / 141 / 3 973, merchant 4 117 / 142 / 3 975.
  const split = computeSplit([pct('a', '33.33', CPF), pct('b', '33.33', CPF)], 12_345, 424);
  const rows = (n: number, kind: 'credit' | 'debit', on: string) => payableCells(split, n, kind, on);
  const totals: Record<string, { gross: number; fee: number; net: number }> = {
    [MERCHANT]: split.merchant,
    a: split.entries[0],
    b: split.entries[1],
  };

  function expectColumnsAddUp(n: number, cs: ReturnType<typeof rows>) {
    expect(cs).toHaveLength(3 * n);
    for (const c of cs) {
      expect(c.gross).toBe(c.fee + c.net);
      expect(Math.min(c.gross, c.fee, c.net)).toBeGreaterThanOrEqual(0);
    }
    for (const [party, total] of Object.entries(totals)) {
      const mine = cs.filter((c) => c.party === party);
      expect(mine.map((c) => c.instalment)).toEqual(Array.from({ length: n }, (_, k) => k + 1));
      const sum = (k: 'gross' | 'fee' | 'net') => mine.reduce((s, c) => s + c[k], 0);
      expect({ gross: sum('gross'), fee: sum('fee'), net: sum('net') }).toEqual({ gross: total.gross, fee: total.fee, net: total.net });
    }
  }

  it('credit 3x: due D+30/60/90, remainders on instalment 1, gross = fee + net', () => {
    const cs = rows(3, 'credit', '2024-01-31');
    expectColumnsAddUp(3, cs);
    const of = (party: string) => cs.filter((c) => c.party === party).map((c) => [c.dueDate, c.gross, c.fee, c.net]);
    expect(of(MERCHANT)).toEqual([
      ['2024-03-01', 1_373, 48, 1_325],
      ['2024-03-31', 1_372, 47, 1_325],
      ['2024-04-30', 1_372, 47, 1_325],
    ]);
    expect(of('a')).toEqual([
      ['2024-03-01', 1_372, 47, 1_325],
      ['2024-03-31', 1_371, 47, 1_324],
      ['2024-04-30', 1_371, 47, 1_324],
    ]);
    expect(of('b')).toEqual(of('a'));
  });

  it('credit 12x: due D+30k up to D+360, remainders on instalment 1', () => {
    const cs = rows(12, 'credit', '2024-01-31');
    expectColumnsAddUp(12, cs);
    const merchant = cs.filter((c) => c.party === MERCHANT);
    // fee 142 = 11 × 12 + 10, net 3 975 = 331 × 12 + 3.
    expect(merchant.map((c) => c.fee)).toEqual([21, ...Array(11).fill(11)]);
    expect(merchant.map((c) => c.net)).toEqual([334, ...Array(11).fill(331)]);
    const a = cs.filter((c) => c.party === 'a');
    // fee 141 = 11 × 12 + 9, net 3 973 = 331 × 12 + 1.
    expect(a.map((c) => c.fee)).toEqual([20, ...Array(11).fill(11)]);
    expect(a.map((c) => c.net)).toEqual([332, ...Array(11).fill(331)]);
    expect(merchant.map((c) => c.dueDate).slice(0, 3)).toEqual(['2024-03-01', '2024-03-31', '2024-04-30']);
    expect(merchant[11].dueDate).toBe('2025-01-25');
  });

  it('debit 1x: due D+1 (across a leap day), one cell per party equal to its totals', () => {
    const cs = rows(1, 'debit', '2024-02-29');
    expectColumnsAddUp(1, cs);
    expect(cs).toEqual([
      { party: MERCHANT, instalment: 1, dueDate: '2024-03-01', gross: 4_117, fee: 142, net: 3_975 },
      { party: 'a', instalment: 1, dueDate: '2024-03-01', gross: 4_114, fee: 141, net: 3_973 },
      { party: 'b', instalment: 1, dueDate: '2024-03-01', gross: 4_114, fee: 141, net: 3_973 },
    ]);
  });
});

describe('docs/merchants/split.md 6: cancellations', () => {
  const split: SplitResult = computeSplit([pct('a', '33.33', CPF), pct('b', '33.33', CPF)], 12_345, 424);
  const sum = (ds: { amount: number }[]) => ds.reduce((s, d) => s + d.amount, 0);

  it('partial cancel of 5 000 of 12 345: floor(5 000 × gᵢ / G) per entry, the merchant takes the rest', () => {
    const ds = cancellationDebits(split, 0, 5_000);
    expect(ds).toEqual([
      { party: MERCHANT, amount: 1_668 },
      { party: 'a', amount: 1_666 },
      { party: 'b', amount: 1_666 },
    ]);
    expect(sum(ds)).toBe(5_000);
  });

  it('second cancel completes the full amount: each party debited exactly its gross slice in total', () => {
    const first = cancellationDebits(split, 0, 5_000);
    const second = cancellationDebits(split, 5_000, 12_345);
    expect(second).toEqual([
      { party: MERCHANT, amount: 2_449 },
      { party: 'a', amount: 2_448 },
      { party: 'b', amount: 2_448 },
    ]);
    expect(sum(second)).toBe(7_345);
    const total = (party: string) => sum([...first, ...second].filter((d) => d.party === party));
    expect(total(MERCHANT)).toBe(split.merchant.gross);
    expect(total('a')).toBe(split.entries[0].gross);
    expect(total('b')).toBe(split.entries[1].gross);
  });

  it('liable plays no role in cancellations', () => {
    const notLiable = computeSplit([pct('a', '33.33', { ...CPF, liable: false }), pct('b', '33.33', CPF)], 12_345, 424);
    expect(cancellationDebits(notLiable, 0, 5_000)).toEqual(cancellationDebits(split, 0, 5_000));
  });
});

describe('docs/merchants/split.md 7: chargebacks', () => {
  const G = 10_000;
  const F = 299;
  const sum = (ds: { amount: number }[]) => ds.reduce((s, d) => s + d.amount, 0);

  it('only liable entries, proportional, remainder to the principal liable entry (largest gross, declared later)', () => {
    // a 2 500 liable, b 3 500 liable, c 1 000 not liable: 1 000 → a 416, b 583 + 1.
    const split = computeSplit([pct('a', '25'), pct('b', '35'), pct('c', '10', { liable: false })], G, F);
    const first = chargebackDebits(split, 0, 1_000);
    expect(first).toEqual([
      { party: 'a', amount: 416 },
      { party: 'b', amount: 584 },
    ]);
    // cumulative to 10 000: a 4 166, b 5 833 + 1.
    const second = chargebackDebits(split, 1_000, 10_000);
    expect(second).toEqual([
      { party: 'a', amount: 3_750 },
      { party: 'b', amount: 5_250 },
    ]);
    expect(sum(first)).toBe(1_000);
    expect(sum(second)).toBe(9_000);
  });

  it('tie on the largest liable gross → the earliest declared takes the remainder', () => {
    const split = computeSplit([pct('c', '10', { liable: false }), pct('a', '30'), pct('b', '30')], G, F);
    expect(chargebackDebits(split, 0, 1_001)).toEqual([
      { party: 'a', amount: 501 },
      { party: 'b', amount: 500 },
    ]);
  });

  it('no liable entry: the merchant bears it all', () => {
    const split = computeSplit([pct('a', '25', { liable: false }), amt('b', 3_000, { ...CPF, liable: false })], G, F);
    expect(chargebackDebits(split, 0, 1_000)).toEqual([{ party: MERCHANT, amount: 1_000 }]);
    expect(chargebackDebits(split, 1_000, 10_000)).toEqual([{ party: MERCHANT, amount: 9_000 }]);
  });
});

describe('docs/merchants/split.md 3: validateSplit, one case per error code', () => {
  const recipients = new Map<string, 'pending' | 'approved'>([
    ['r1', 'approved'],
    ['r2', 'approved'],
    ['r3', 'approved'],
    ['p1', 'pending'],
  ]);
  const ctx: SplitContext = { gross: 10_000, fee: 299, merchantId: 'm1', recipients, maxEntries: 10 };
  const eleven = Array.from({ length: 11 }, (_, i) => `r${i + 1}`);
  const many = new Map<string, 'pending' | 'approved'>(eleven.map((r) => [r, 'approved']));
  const C = SplitErrorCodes;

  const cases: { code: string; parameter: string; entries: SplitEntryInput[]; ctx?: Partial<SplitContext> }[] = [
    { code: C.RecipientRequired, parameter: 'payment.split[0].recipient', entries: [pct(undefined, '10')] },
    { code: C.RecipientNotFound, parameter: 'payment.split[1].recipient', entries: [pct('r1', '10'), pct('zz', '10')] },
    { code: C.RecipientNotActive, parameter: 'payment.split[0].recipient', entries: [pct('p1', '10')] },
    { code: C.RecipientIsMerchant, parameter: 'payment.split[0].recipient', entries: [pct('M1', '10')] },
    // The merchant named by its public id (what it authenticates with) is the merchant too.
    {
      code: C.RecipientIsMerchant,
      parameter: 'payment.split[1].recipient',
      entries: [pct('r1', '10'), pct('1234567897', '10')],
      ctx: { merchantPublicId: '1234567897' },
    },
    { code: C.ValueRequired, parameter: 'payment.split[0]', entries: [entry('r1', {})] },
    { code: C.ValueAmbiguous, parameter: 'payment.split[0]', entries: [entry('r1', { percentage: '10', amount: 100 })] },
    {
      code: C.PercentageOutOfRange,
      parameter: 'payment.split[2].percentage',
      entries: [pct('r1', '10'), pct('r2', '10'), pct('r3', '0.99')],
    },
    {
      code: C.PercentagePrecision,
      parameter: 'payment.split[2].percentage',
      entries: [pct('r1', '10'), pct('r2', '10'), pct('r3', '12.345')],
    },
    { code: C.AmountOutOfRange, parameter: 'payment.split[1].amount', entries: [pct('r1', '10'), amt('r2', 10_001)] },
    { code: C.Empty, parameter: 'payment.split', entries: [] },
    { code: C.TooManyEntries, parameter: 'payment.split', entries: eleven.map((r) => pct(r, '1')), ctx: { recipients: many } },
    { code: C.RecipientDuplicated, parameter: 'payment.split[1].recipient', entries: [pct('r1', '10'), amt('r1', 100)] },
    { code: C.PercentageSumExceeded, parameter: 'payment.split', entries: [pct('r1', '60'), pct('r2', '40.01')] },
    { code: C.MultipleFullFeePayers, parameter: 'payment.split', entries: [pct('r1', '10', CRPF), pct('r2', '10', CRPF)] },
    { code: C.FullAndProrataConflict, parameter: 'payment.split', entries: [pct('r1', '10', CRPF), pct('r2', '10', CPF)] },
    { code: C.FeeExceedsAmount, parameter: 'payment.amount', entries: [pct('r1', '10')], ctx: { fee: 10_000 } },
    { code: C.GrossExceeded, parameter: 'payment.split', entries: [amt('r1', 6_000), amt('r2', 4_001)] },
    // A FULL entry of 200 cents cannot pay F = 299.
    { code: C.FeeExceedsShare, parameter: 'payment.split[0]', entries: [amt('r1', 200, CRPF)] },
    // The merchant keeps 100 cents but bears the whole fee of 299.
    { code: C.MerchantNetNegative, parameter: 'payment.split', entries: [amt('r1', 9_900)] },
  ];

  it('has a case for every code of SplitErrorCodes', () => {
    expect(new Set(cases.map((c) => c.code))).toEqual(new Set(Object.values(SplitErrorCodes)));
  });

  it.each(cases)('$code at $parameter', ({ code, parameter, entries, ctx: over }) => {
    const problems = validateSplit(entries, { ...ctx, ...over });
    expect(problems).toEqual([{ code, parameter, message: expect.any(String) }]);
  });

  it('a blank recipient is missing too', () => {
    expect(validateSplit([pct('r1', '10'), pct('  ', '10')], ctx)).toEqual([
      { code: C.RecipientRequired, parameter: 'payment.split[1].recipient', message: expect.any(String) },
    ]);
  });

  it('an amount of 0 is out of range', () => {
    expect(validateSplit([amt('r1', 0)], ctx)).toEqual([
      { code: C.AmountOutOfRange, parameter: 'payment.split[0].amount', message: expect.any(String) },
    ]);
  });

  it('reports one error per problem, each with its parameter', () => {
    const problems = validateSplit([pct('p1', '0.5'), amt('zz', 0), entry(undefined, {})], ctx);
    expect(problems.map((p) => [p.code, p.parameter])).toEqual([
      [C.RecipientNotActive, 'payment.split[0].recipient'],
      [C.PercentageOutOfRange, 'payment.split[0].percentage'],
      [C.RecipientNotFound, 'payment.split[1].recipient'],
      [C.AmountOutOfRange, 'payment.split[1].amount'],
      [C.RecipientRequired, 'payment.split[2].recipient'],
      [C.ValueRequired, 'payment.split[2]'],
    ]);
  });

  it('a valid split has no problems', () => {
    expect(validateSplit([pct('r1', '10', CPF), amt('r2', 2_000, CPF), pct('r3', '5', { liable: false })], ctx)).toEqual([]);
  });
});

describe('percentageToBp', () => {
  it.each([
    ['12.5', { bp: 1_250 }],
    ['100', { bp: 10_000 }],
    ['1', { bp: 100 }],
    ['0.99', { error: 'range' }],
    ['12.345', { error: 'precision' }],
    ['12.340', { bp: 1_234 }],
    ['100.01', { error: 'range' }],
  ])('%s → %j', (text, expected) => {
    expect(percentageToBp(text)).toEqual(expected);
  });
});
