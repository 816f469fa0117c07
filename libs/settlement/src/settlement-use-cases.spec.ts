import type { SaleTerms, SplitResult } from '@app/contracts';
import type { CaptureClaim, CapturedRow, LedgerRepository, PayableWrite, SettlementRow } from '@app/persistence';
import { CancelSettlement } from './cancel-settlement';
import { CaptureSettlement } from './capture-settlement';
import { ChargebackSettlement } from './chargeback-settlement';
import { VerifyLedger } from './verify-ledger';

const ID = '00000000-0000-4000-8000-000000000001';
const MERCHANT_ID = '00000000-0000-4000-8000-0000000000aa';
const RECIPIENT = '00000000-0000-4000-8000-0000000000bb';

/** An in-memory ledger holding one transaction: what the use-cases read and what they wrote. */
function fakeLedger(t: { captured: number; cancelled?: number; open?: number; split?: CapturedRow['terms'] }) {
  let settlement: SettlementRow | undefined;
  const written: { kind: string; cells: PayableWrite[] }[] = [];
  const ledger = {
    inTransaction: <T>(work: (tx: never) => Promise<T>) => work(undefined as never),
    autocommit: undefined,
    readCaptured: async (_tx: unknown, ids: readonly string[]): Promise<CapturedRow[]> =>
      ids.includes(ID)
        ? [
            {
              id: ID,
              merchant_id: MERCHANT_ID,
              captured_amount: String(t.captured),
              instalments: 2,
              method: 1,
              terms: t.split,
            },
          ]
        : [],
    claimCaptures: async (_tx: unknown, claims: readonly CaptureClaim[]) => {
      const fresh = claims.filter(() => !settlement);
      for (const c of fresh) {
        settlement = {
          transaction_id: c.id,
          merchant_id: c.merchantId,
          gross: String(c.gross),
          fee: String(c.fee),
          split: c.split,
          cancelled: '0',
          charged_back: '0',
        };
        written.push({ kind: 'capture', cells: c.payables });
      }
      return new Set(fresh.map((c) => c.id));
    },
    lockSettlement: async () => settlement && { ...settlement },
    cancelledAmountOf: async () => t.cancelled ?? 0,
    setSettledCancelled: async (_tx: unknown, _id: string, total: number) => void (settlement!.cancelled = String(total)),
    recordedChargebackAmount: async () => undefined,
    lockOpenAmount: async () => t.open ?? t.captured,
    addChargedBack: async () => undefined,
    setSettledChargedBack: async (_tx: unknown, _id: string, total: number) => void (settlement!.charged_back = String(total)),
    recordChargebackId: async () => undefined,
    insertPayables: async (_tx: unknown, _id: string, _m: string, kind: string, cells: readonly PayableWrite[]) =>
      void written.push({ kind, cells: [...cells] }),
  };
  return { ledger: ledger as unknown as LedgerRepository, written };
}

const terms: SaleTerms = {
  kind: 'credit',
  brand: 'visa',
  fee: { ratePpm: 20_000, fixed: 10 },
  split: [
    {
      recipient: RECIPIENT,
      percentage: '25',
      liable: true,
      chargeProcessingFee: false,
      chargeRecipientProcessingFee: false,
      isGrossAmount: false,
    },
  ],
};

describe('settlement use-cases', () => {
  it('a capture writes the split of the captured amount once, per party × instalment, the merchant without a recipient', async () => {
    const { ledger, written } = fakeLedger({ captured: 10_001, split: terms });
    const capture = new CaptureSettlement(ledger);
    expect(await capture.claimWithin(undefined as never, ID.toUpperCase())).toBe('written');
    expect(await capture.claimWithin(undefined as never, ID)).toBe('already');
    const cells = written[0].cells;
    expect(cells.map((c) => [c.recipientId, c.instalment])).toEqual([
      [null, 1],
      [null, 2],
      [RECIPIENT, 1],
      [RECIPIENT, 2],
    ]);
    // Fee 2 % of 10 001 rounded half up, + 10 = 210; the cells add up to the captured amount and the fee.
    expect(cells.reduce((s, c) => s + c.gross, 0)).toBe(10_001);
    expect(cells.reduce((s, c) => s + c.fee, 0)).toBe(210);
    expect(await capture.claimWithin(undefined as never, '00000000-0000-4000-8000-000000000009')).toBe('nothing_captured');
  });

  it('a capture without settlement terms fails for that transaction', async () => {
    const { ledger } = fakeLedger({ captured: 500 });
    await expect(new CaptureSettlement(ledger).claimWithin(undefined as never, ID)).rejects.toThrow('has no settlement terms');
  });

  it('a cancel settles the capture first, then debits up to what is cancelled; again, nothing', async () => {
    const { ledger, written } = fakeLedger({ captured: 10_000, cancelled: 4_000, split: terms });
    const cancels = new CancelSettlement(ledger, new CaptureSettlement(ledger));
    expect(await cancels.settle(ID)).toBe('written');
    expect(written.map((w) => w.kind)).toEqual(['capture', 'cancel']);
    expect(written[1].cells.map((c) => [c.recipientId, c.gross, c.fee, c.net])).toEqual([
      [null, 3_000, 0, 3_000],
      [RECIPIENT, 1_000, 0, 1_000],
    ]);
    expect(await cancels.settle(ID)).toBe('already');
  });

  it('a chargeback debits the liable entry and refuses more than is open', async () => {
    const { ledger, written } = fakeLedger({ captured: 10_000, open: 600, split: terms });
    const chargebacks = new ChargebackSettlement(ledger, new CaptureSettlement(ledger));
    await expect(chargebacks.record(ID, 601)).rejects.toThrow('must not exceed the 600 cents');
    const r = await chargebacks.record(ID, 600);
    expect(r).toEqual({ chargedBack: 600, debits: [{ party: RECIPIENT, amount: 600 }], repeated: false });
    expect(written.at(-1)).toEqual({
      kind: 'chargeback',
      cells: [{ recipientId: RECIPIENT, instalment: 1, dueDate: expect.any(String), gross: 600, fee: 0, net: 600 }],
    });
  });

  it('ledger:verify reports each total that differs, and each party whose cells differ from the stored split', async () => {
    const split: SplitResult = { gross: 1_000, fee: 30, entries: [], merchant: { gross: 1_000, fee: 30, net: 970 } };
    const ledger = {
      ledgerTotals: async () => [
        {
          id: 'a',
          captured: '1000',
          cancelled: '0',
          charged_back: '0',
          s_gross: '1000',
          s_fee: '30',
          s_cancelled: '0',
          s_cb: '0',
          cap_gross: '990',
          cap_fee: '30',
          cancel_gross: '0',
          cb_gross: '0',
        },
        {
          id: 'b',
          captured: '500',
          cancelled: '0',
          charged_back: '0',
          s_gross: null,
          s_fee: null,
          s_cancelled: null,
          s_cb: null,
          cap_gross: '0',
          cap_fee: '0',
          cancel_gross: '0',
          cb_gross: '0',
        },
      ],
      capturePartyTotals: async () => [{ transaction_id: 'a', party: 'merchant', gross: '990', fee: '30', net: '960', expected: split }],
    } as unknown as LedgerRepository;
    expect(await new VerifyLedger(ledger).run()).toEqual({
      transactions: 2,
      differences: [
        { transactionId: 'A', check: 'capture payables gross = captured amount', expected: 1_000, actual: 990 },
        { transactionId: 'B', check: 'settled gross = captured amount', expected: 500, actual: 0 },
        { transactionId: 'A', check: 'merchant gross', expected: 1_000, actual: 990 },
        { transactionId: 'A', check: 'merchant net', expected: 970, actual: 960 },
      ],
    });
  });
});
