import { randomUUID } from 'node:crypto';
import { Agent } from 'undici';
import {
  AcquirerAccount,
  AcquirerConnector,
  AcquirerResult,
  AcquirerUnreachableError,
  AuthorizeCommand,
  FollowUpCommand,
  OperationRef,
  SaleBooks,
  SaleRef,
} from '../acquirer.connector';
import { notReceived } from '../outcomes';
import { acquirerAgent, AnswerLostError, callAcquirer, HttpAnswer, HttpSettings } from '../http';
import { bookOfSale, CieloStatus, member, refusal, resultOfSale, resultOfUpdate, saleRequest } from './cielo.wire';
import { CieloOrders, mayHoldMoney, required } from './cielo-orders';

export interface CieloOptions extends HttpSettings {
  /** Transactional host (creates, captures, voids), ending in `/`. */
  apiUrl: string;
  /** Query host, ending in `/`. */
  queryUrl: string;
  /** Cielo asks for this long between two cancellations of one sale. */
  voidSpacingMs: number;
}

/** Cielo answers queries for the last three months. */
const BOOKS_DAYS = 90;

/**
 * Cielo E-commerce API 3.0 (acquirer code 26). Creates are not idempotent at Cielo: a create that
 * may have been sent before is looked up by its MerchantOrderId first, and one whose answer was
 * lost is looked up before anything else happens. A total capture or void is retried once after
 * a lost answer (Cielo refuses a second, so a retry cannot act twice); a partial one never is:
 * its outcome is read from the sale's amounts.
 */
export class CieloConnector implements AcquirerConnector {
  readonly name = 'cielo';
  private readonly agent: Agent;
  private readonly lastVoid = new Map<string, number>();
  private readonly orders: CieloOrders;

  constructor(private readonly opts: CieloOptions) {
    this.agent = acquirerAgent(opts);
    this.orders = new CieloOrders(opts.queryUrl, (account, method, url, body) => this.send(account, method, url, body));
  }

  /** Closes the connection pool (a process that stops, a test). */
  close(): Promise<void> {
    return this.agent.close();
  }

  async authorize(cmd: AuthorizeCommand): Promise<AcquirerResult> {
    const account = required(cmd.account);
    if (cmd.resumed) {
      const found = await this.adoptByOrder(account, cmd.transactionId);
      if (found) return found;
    }
    let answer: HttpAnswer;
    try {
      answer = await this.send(account, 'POST', `${this.opts.apiUrl}1/sales/`, saleRequest(cmd));
    } catch (e) {
      if (!(e instanceof AnswerLostError)) throw e;
      return this.resolveLost(account, cmd.transactionId);
    }
    if (answer.status === 201 || answer.status === 200) return resultOfSale(answer.body);
    if (answer.status >= 500) return this.resolveLost(account, cmd.transactionId);
    return refusal(answer.body, answer.status);
  }

  capture(cmd: FollowUpCommand): Promise<AcquirerResult> {
    return this.update('capture', cmd);
  }

  async cancel(cmd: FollowUpCommand): Promise<AcquirerResult> {
    const key = cmd.saleRef ?? cmd.tid;
    // Cielo asks for a pause between two cancellations of one sale (in this process).
    // (A margin over the spacing: Cielo counts it from when it acted, a little after we sent.)
    const wait = (this.lastVoid.get(key) ?? 0) + this.opts.voidSpacingMs + (this.opts.voidSpacingMs ? 50 : 0) - Date.now();
    if (wait > 0) await new Promise((r) => setTimeout(r, Math.min(wait, this.opts.responseTimeoutMs)));
    try {
      return await this.update('void', cmd);
    } finally {
      this.lastVoid.set(key, Date.now());
      if (this.lastVoid.size > 10_000) this.lastVoid.clear();
    }
  }

  /**
   * A reversal leaves the sale on no charge at all: every PaymentId under its order id is voided,
   * not only the one named (two creates of one sale make two). The answer is the named one's.
   */
  async reverse(cmd: FollowUpCommand): Promise<AcquirerResult> {
    const account = required(cmd.account);
    const ids = cmd.transactionId ? await this.orders.paymentIdsByOrder(account, cmd.transactionId) : [];
    if (cmd.saleRef && !ids.includes(cmd.saleRef)) ids.push(cmd.saleRef);
    if (!ids.length)
      return { outcome: 'approved', returnCode: '00', returnMessage: 'Nothing to reverse: no such sale at Cielo', tid: cmd.tid, nsu: '' };
    let named: AcquirerResult | undefined;
    for (const saleRef of ids) {
      const voided = await this.voidWhole(account, cmd, saleRef);
      // One refused leaves the sale undecided: the caller tries the whole reversal again later.
      if (voided.outcome !== 'approved') return voided;
      if (saleRef === cmd.saleRef || !cmd.saleRef) named = voided;
    }
    return named!;
  }

  /** Voids one PaymentId whole; approved also when there is nothing left to void (declined, voided before). */
  private async voidWhole(account: AcquirerAccount, cmd: FollowUpCommand, saleRef: string): Promise<AcquirerResult> {
    const voided = await this.update('void', { ...cmd, account, saleRef, amount: undefined });
    if (voided.outcome === 'approved') return voided;
    // Refused: a declined or already voided sale holds nothing to undo; one still undecided at
    // Cielo (0, 12) may yet become a charge: not "nothing to reverse".
    const holds = mayHoldMoney(await this.orders.readSale(account, saleRef));
    return holds ? voided : { ...voided, outcome: 'approved', returnMessage: 'Nothing left to reverse' };
  }

  async inquire(ref: OperationRef): Promise<AcquirerResult | undefined> {
    const account = required(ref.account);
    if (ref.kind === 'authorize') return this.orders.findByOrder(account, ref.transactionId);
    const saleRef = ref.saleRef ?? (await this.orders.paymentIdOf(account, ref.transactionId));
    if (!saleRef) return undefined;
    const sale = await this.orders.readSale(account, saleRef);
    if (!sale) return undefined;
    const book = bookOfSale(sale);
    const before = ref.before ?? { captured: 0, cancelled: 0 };
    const moved = ref.kind === 'capture' ? book.captured > before.captured : book.cancelled >= before.cancelled + (ref.amount ?? 1);
    if (!moved) return undefined;
    const sold = resultOfSale(sale);
    return { ...sold, outcome: 'approved', returnCode: '00', returnMessage: ref.kind === 'capture' ? 'Captured' : 'Voided' };
  }

  async settle(ref: OperationRef): Promise<AcquirerResult> {
    return (await this.inquire(ref)) ?? notReceived(ref.tid);
  }

  /** Every sale under each sale's order id: see CieloOrders.books. */
  books(sales: readonly SaleRef[]): Promise<Map<string, SaleBooks>> {
    return this.orders.books(sales);
  }

  booksSince(now: Date): Date | undefined {
    return new Date(now.getTime() - BOOKS_DAYS * 86_400_000);
  }

  /** A capture or void by PaymentId; a lost answer is settled from the sale, a total one retried once first. */
  private async update(action: 'capture' | 'void', cmd: FollowUpCommand): Promise<AcquirerResult> {
    const account = required(cmd.account);
    const saleRef = cmd.saleRef ?? (cmd.transactionId ? await this.orders.paymentIdOf(account, cmd.transactionId) : undefined);
    if (!saleRef) return { outcome: 'declined', returnCode: '307', returnMessage: 'Transaction not found', tid: cmd.tid, nsu: '' };
    const url = `${this.opts.apiUrl}1/sales/${encodeURIComponent(saleRef)}/${action}${cmd.amount === undefined ? '' : `?amount=${cmd.amount}`}`;
    for (let attempt = 1; ; attempt++) {
      try {
        const answer = await this.send(account, 'PUT', url);
        if (answer.status === 200) return resultOfUpdate(answer.body, cmd.tid, saleRef);
        // A resent total operation refused (308, 309): the first one may have acted after all.
        if (answer.status < 500 && attempt > 1)
          return this.totalDone(account, action, saleRef, refusal(answer.body, answer.status, cmd.tid));
        if (answer.status < 500) return refusal(answer.body, answer.status, cmd.tid);
      } catch (e) {
        if (!(e instanceof AnswerLostError)) throw e;
      }
      // Only a total operation is safe to send again: Cielo refuses a second one (308, 309).
      if (cmd.amount !== undefined || attempt >= 2) throw new AcquirerUnreachableError(this.name, `cielo: the ${action} got no answer`);
    }
  }

  /** After a resent total capture or void was refused: approved if the sale shows it done (captured, or voided whole). */
  private async totalDone(
    account: AcquirerAccount,
    action: 'capture' | 'void',
    saleRef: string,
    refused: AcquirerResult,
  ): Promise<AcquirerResult> {
    const sale = await this.orders.readSale(account, saleRef);
    const status = Number(member(member(sale, 'Payment'), 'Status'));
    const done = action === 'capture' ? bookOfSale(sale).captured > 0 : status === CieloStatus.Voided || status === CieloStatus.Refunded;
    return done ? { ...resultOfSale(sale), outcome: 'approved', returnMessage: action === 'capture' ? 'Captured' : 'Voided' } : refused;
  }

  /** What became of a create whose answer was lost: adopted if Cielo has it, "not charged" if it does not. */
  /**
   * What became of a create whose answer was lost (no answer, or a 5xx: a proxy in front of Cielo may
   * answer while the request goes on), asked by its order id: adopted if Cielo has it. If not yet,
   * the outcome stays unknown: the sale waits at status 0 and the reconciler asks again before it
   * declines it (and voids whatever it finds then).
   */
  private async resolveLost(account: AcquirerAccount, transactionId: string): Promise<AcquirerResult> {
    let found: AcquirerResult | undefined;
    try {
      found = await this.adoptByOrder(account, transactionId);
    } catch {
      throw new AcquirerUnreachableError(this.name, 'cielo: the sale got no answer and the query failed too');
    }
    if (found) return found;
    throw new AcquirerUnreachableError(this.name, 'cielo: the sale got no answer, and Cielo has no record of it yet');
  }

  /** The sale an earlier try of this create made, if Cielo has it, its duplicates voided: see CieloOrders.adoptByOrder. */
  private adoptByOrder(account: AcquirerAccount, transactionId: string): Promise<AcquirerResult | undefined> {
    return this.orders.adoptByOrder(account, transactionId, (a, cmd, saleRef) => this.voidWhole(a, cmd, saleRef));
  }

  private send(account: AcquirerAccount, method: 'GET' | 'POST' | 'PUT', url: string, body?: unknown): Promise<HttpAnswer> {
    return callAcquirer(this.agent, this.name, url, {
      method,
      headers: {
        'content-type': 'application/json',
        accept: 'application/json',
        merchantid: account.account,
        merchantkey: account.secret,
        requestid: randomUUID(),
      },
      body,
      timeoutMs: this.opts.responseTimeoutMs,
    });
  }
}
