import { randomBytes, randomInt } from 'node:crypto';
import { maskPan } from '@app/card';
import {
  AcquirerConnector,
  AcquirerResult,
  AuthorizeCommand,
  FollowUpCommand,
  OperationRef,
  SaleBooks,
  SaleRef,
} from './acquirer.connector';
import { SandboxCallLog } from './sandbox-call-log';

const BY_LAST_DIGIT: Record<string, { outcome: AcquirerResult['outcome']; returnCode: string; returnMessage: string; slow?: true }> = {
  '0': { outcome: 'approved', returnCode: '00', returnMessage: 'Approved' },
  '1': { outcome: 'approved', returnCode: '00', returnMessage: 'Approved' },
  '4': { outcome: 'approved', returnCode: '00', returnMessage: 'Approved' },
  '6': { outcome: 'approved', returnCode: '00', returnMessage: 'Approved' },
  '2': { outcome: 'declined', returnCode: '05', returnMessage: 'Not authorized' },
  '3': { outcome: 'declined', returnCode: '54', returnMessage: 'Expired card' },
  '5': { outcome: 'declined', returnCode: '78', returnMessage: 'Blocked card' },
  '7': { outcome: 'declined', returnCode: '14', returnMessage: 'Cancelled card' },
  '8': { outcome: 'timeout', returnCode: '91', returnMessage: 'Acquirer timeout' },
  '9': { outcome: 'approved', returnCode: '00', returnMessage: 'Approved', slow: true },
};

/**
 * The built-in test acquirer (docs/merchants/sandbox.md): the outcome follows the card number's last digit.
 * Every call is recorded (masked card only) and keyed by its operation key, so a repeated
 * operation is answered from the record instead of charging again.
 */
export class SandboxAcquirer implements AcquirerConnector {
  readonly name = 'sandbox';

  constructor(
    private readonly log: SandboxCallLog,
    private readonly opts: {
      slowApprovalMs: number;
      /** A capture's or cancel's network time, half before and half after it acts. */ followUpLatencyMs?: number;
      /** How long the call log keeps an authorization's calls (RETENTION_SANDBOX_CALLS); whole when unset. */
      booksKeptMs?: number;
    },
  ) {}

  async authorize(cmd: AuthorizeCommand): Promise<AcquirerResult> {
    const rule = BY_LAST_DIGIT[cmd.pan.slice(-1)];
    if (rule.slow) await sleep(this.opts.slowApprovalMs);
    const result: AcquirerResult = {
      outcome: rule.outcome,
      returnCode: rule.returnCode,
      returnMessage: rule.returnMessage,
      authorizationCode: rule.outcome === 'approved' ? String(randomInt(0, 1_000_000)).padStart(6, '0') : undefined,
      tid: randomBytes(10).toString('hex'),
      nsu: String(randomInt(0, 1_000_000_000)).padStart(9, '0'),
    };
    // Recorded (once per operation key) before it is answered; a repeat gets the first answer.
    return this.log.recordOnce({
      operationKey: cmd.operationKey,
      kind: 'authorize',
      capture: cmd.capture,
      maskedPan: maskPan(cmd.pan),
      amount: cmd.amount,
      tid: result.tid,
      result,
      initiator: cmd.initiator ?? 'customer',
    });
  }

  capture(cmd: FollowUpCommand): Promise<AcquirerResult> {
    return this.withLatency(() => this.followUp('capture', cmd));
  }

  cancel(cmd: FollowUpCommand): Promise<AcquirerResult> {
    return this.withLatency(() => this.followUp('cancel', cmd));
  }

  /** Like a remote acquirer, the call may be lost on the way there or its answer on the way back. */
  private async withLatency<T>(call: () => Promise<T>): Promise<T> {
    const half = (this.opts.followUpLatencyMs ?? 0) / 2;
    if (half) await sleep(half);
    const result = await call();
    if (half) await sleep(half);
    return result;
  }

  /** Undoes an authorization whose outcome was unknown; accepted for any tid the sandbox issued. */
  async reverse(cmd: FollowUpCommand): Promise<AcquirerResult> {
    const result: AcquirerResult = {
      outcome: 'approved',
      returnCode: '00',
      returnMessage: 'Reversed',
      tid: cmd.tid,
      nsu: String(randomInt(0, 1_000_000_000)).padStart(9, '0'),
    };
    return this.log.recordOnce({ operationKey: cmd.operationKey, kind: 'reverse', tid: cmd.tid, result });
  }

  async inquire(ref: OperationRef): Promise<AcquirerResult | undefined> {
    return (await this.log.find(ref.operationKey))?.result;
  }

  /** The sandbox can close a key: a call that landed before stands, otherwise the key is refused for good. */
  settle(ref: OperationRef): Promise<AcquirerResult> {
    return this.fence(ref.operationKey, ref.kind === 'authorize' ? 'cancel' : ref.kind);
  }

  private async fence(operationKey: string, kind: 'capture' | 'cancel'): Promise<AcquirerResult> {
    // First call under a key wins: a call that landed before stands, otherwise this refusal does.
    const refused: AcquirerResult = {
      outcome: 'declined',
      returnCode: 'VD',
      returnMessage: 'Voided: never received before the gateway closed its key',
      tid: '',
      nsu: '',
      voided: true,
    };
    return this.log.recordOnce({ operationKey, kind, result: refused });
  }

  /** By tid only: the sandbox decides a sale in the call that records it, so a sale without a tid never reached it. */
  async books(sales: readonly SaleRef[]): Promise<Map<string, SaleBooks>> {
    const byTid = await this.log.books(sales.flatMap((s) => (s.tid ? [s.tid] : [])));
    const out = new Map<string, SaleBooks>();
    for (const s of sales) {
      const sale = s.tid ? byTid.get(s.tid) : undefined;
      if (sale) out.set(s.transactionId, { sale, others: [] });
    }
    return out;
  }

  touchedSince(since: Date): Promise<string[]> {
    return this.log.touchedSince(since);
  }

  booksSince(now: Date): Date | undefined {
    return this.opts.booksKeptMs === undefined ? undefined : new Date(now.getTime() - this.opts.booksKeptMs);
  }

  private async followUp(kind: 'capture' | 'cancel', cmd: FollowUpCommand): Promise<AcquirerResult> {
    const known = await this.log.recordRepeat({ operationKey: cmd.operationKey, kind, amount: cmd.amount });
    if (known) return known.result;
    const approved = await this.log.findApprovedAuthorization(cmd.tid);
    const result: AcquirerResult = approved
      ? {
          outcome: 'approved',
          returnCode: '00',
          returnMessage: kind === 'capture' ? 'Captured' : 'Cancelled',
          tid: cmd.tid,
          nsu: String(randomInt(0, 1_000_000_000)).padStart(9, '0'),
        }
      : { outcome: 'declined', returnCode: '57', returnMessage: 'Unknown transaction', tid: cmd.tid, nsu: '' };
    return this.log.recordOnce({ operationKey: cmd.operationKey, kind, amount: cmd.amount, tid: cmd.tid, result });
  }
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
