import fc from 'fast-check';
import { withLastDigit, TEST_CARDS } from '@app/card';
import { AcquirerBook, AcquirerResult } from './acquirer.connector';
import { SandboxAcquirer } from './sandbox-acquirer';
import { SandboxCall, SandboxCallLog } from './sandbox-call-log';

/** The call log's contract in memory (the Postgres one is exercised by the end-to-end suites). */
class MemoryCallLog implements SandboxCallLog {
  readonly calls: SandboxCall[] = [];
  readonly repeats: string[] = [];
  async recordOnce(call: SandboxCall): Promise<AcquirerResult> {
    const known = await this.recordRepeat(call);
    if (known) return known.result;
    this.calls.push(call);
    return call.result;
  }
  async recordRepeat(call: Pick<SandboxCall, 'operationKey'>) {
    const known = await this.find(call.operationKey);
    if (known) this.repeats.push(call.operationKey);
    return known;
  }
  async find(key: string) {
    return this.calls.find((c) => c.operationKey === key);
  }
  async findApprovedAuthorization(tid: string) {
    return this.calls.find((c) => c.kind === 'authorize' && c.tid === tid && c.result.outcome === 'approved');
  }
  async books(): Promise<Map<string, AcquirerBook>> {
    return new Map();
  }
  async touchedSince(): Promise<string[]> {
    return [];
  }
}

const command = (pan: string, operationKey = `tx-${pan.slice(-1)}`) => ({
  transactionId: operationKey,
  operationKey,
  acquirer: 26,
  pan,
  expYear: 2030,
  expMonth: 12,
  holder: 'X',
  amount: 1000,
  currency: '986',
  instalments: 1,
  capture: true,
});

describe('sandbox acquirer', () => {
  let log: MemoryCallLog;
  let sandbox: SandboxAcquirer;
  beforeEach(() => {
    log = new MemoryCallLog();
    sandbox = new SandboxAcquirer(log, { slowApprovalMs: 20 });
  });

  it('its books reach back as far as its call log keeps them (RETENTION_SANDBOX_CALLS), or wholly when it keeps everything', () => {
    const now = new Date('2026-11-25T12:00:00Z');
    expect(sandbox.booksSince(now)).toBeUndefined();
    const pruned = new SandboxAcquirer(log, { slowApprovalMs: 0, booksKeptMs: 90 * 86_400_000 });
    expect(pruned.booksSince(now)).toEqual(new Date('2026-08-27T12:00:00Z'));
  });

  it.each([
    [0, 'approved', '00'],
    [1, 'approved', '00'],
    [4, 'approved', '00'],
    [6, 'approved', '00'],
    [2, 'declined', '05'],
    [3, 'declined', '54'],
    [5, 'declined', '78'],
    [7, 'declined', '14'],
    [8, 'timeout', '91'],
    [9, 'approved', '00'],
  ])('a card ending in %i is %s with return code %s', async (digit, outcome, returnCode) => {
    const r = await sandbox.authorize(command(withLastDigit(TEST_CARDS.visa, digit)));
    expect(r).toMatchObject({ outcome, returnCode });
    expect(r.tid).toMatch(/^[0-9a-f]{20}$/);
  });

  it('approves a card ending in 9 only after the configured delay', async () => {
    const started = Date.now();
    await sandbox.authorize(command(withLastDigit(TEST_CARDS.visa, 9)));
    expect(Date.now() - started).toBeGreaterThanOrEqual(15);
  });

  it('answers a repeated operation key from its record: one charge', async () => {
    const pan = withLastDigit(TEST_CARDS.visa, 1);
    const first = await sandbox.authorize(command(pan, 'tx-1-authorize'));
    const again = await sandbox.authorize(command(pan, 'tx-1-authorize'));
    expect(again).toEqual(first);
    expect(log.calls.filter((c) => c.kind === 'authorize')).toHaveLength(1);
    expect(log.repeats).toEqual(['tx-1-authorize']);
  });

  it('records the reversal of a timed-out authorization', async () => {
    const r = await sandbox.authorize(command(withLastDigit(TEST_CARDS.visa, 8)));
    await sandbox.reverse({ operationKey: 'tx-8-reversal', tid: r.tid });
    expect(log.calls.map((c) => c.kind)).toEqual(['authorize', 'reverse']);
  });

  it('captures and cancels only what it approved', async () => {
    const ok = await sandbox.authorize(command(withLastDigit(TEST_CARDS.visa, 1)));
    expect((await sandbox.capture({ operationKey: 'c1', tid: ok.tid, amount: 500 })).outcome).toBe('approved');
    expect((await sandbox.cancel({ operationKey: 'x1', tid: ok.tid, amount: 500 })).outcome).toBe('approved');
    expect((await sandbox.capture({ operationKey: 'c2', tid: 'unknown', amount: 500 })).outcome).toBe('declined');
  });

  it('settles a key it never received by closing it (a late call under it acts on nothing) and leaves one it did as it was', async () => {
    const ok = await sandbox.authorize(command(withLastDigit(TEST_CARDS.visa, 1)));
    expect(await sandbox.settle({ operationKey: 'lost-1', kind: 'cancel', transactionId: 't' })).toMatchObject({
      outcome: 'declined',
      voided: true,
    });
    expect(await sandbox.cancel({ operationKey: 'lost-1', tid: ok.tid, amount: 500 })).toMatchObject({ outcome: 'declined', voided: true });
    const done = await sandbox.capture({ operationKey: 'done-1', tid: ok.tid, amount: 500 });
    expect(await sandbox.settle({ operationKey: 'done-1', kind: 'capture', transactionId: 't' })).toEqual(done);
    expect(log.calls.filter((c) => c.result.outcome === 'approved' && c.kind !== 'authorize').map((c) => c.operationKey)).toEqual([
      'done-1',
    ]);
  });

  it('never records more of a card number than its first 6 and last 4 digits', async () => {
    let n = 0;
    await fc.assert(
      fc.asyncProperty(
        fc.integer({ min: 0, max: 9 }).filter((d) => d !== 9),
        fc.stringMatching(/^\d{9}$/),
        async (digit, middle) => {
          const pan = withLastDigit(`411111${middle}0`, digit);
          const key = `k-${++n}`;
          await sandbox.authorize(command(pan, key));
          expect(JSON.stringify(log.calls)).not.toContain(pan);
          const recorded = log.calls.find((c) => c.operationKey === key)!;
          expect(recorded.maskedPan).toBe(`${pan.slice(0, 6)}******${pan.slice(-4)}`);
        },
      ),
      { numRuns: 200 },
    );
  });
});
