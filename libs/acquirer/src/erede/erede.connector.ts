import { Agent } from 'undici';
import {
  AcquirerAccount,
  AcquirerConnector,
  AcquirerResult,
  AcquirerUnavailableError,
  AcquirerUnreachableError,
  AuthorizeCommand,
  FollowUpCommand,
  OperationRef,
  SaleBooks,
  SaleRef,
} from '../acquirer.connector';
import { booksByOrder, notReceived } from '../outcomes';
import { acquirerAgent, AnswerLostError, callAcquirer, HttpAnswer, HttpSettings } from '../http';
import { bookOfTransaction, eredeReference, resultOfCreate, resultOfFollowUp, resultOfTransaction, transactionRequest } from './erede.wire';

export interface EredeOptions extends HttpSettings {
  /** e.Rede's base (production `https://api.userede.com.br/erede`); the connector adds `/v1/…`. */
  apiUrl: string;
}

/**
 * e.Rede REST v1 (acquirer code 27). As with Cielo, a create is not idempotent: one that may have
 * been sent before is looked up by its reference first, and one whose answer was lost is looked up
 * before anything else happens. A capture is total or once, and a refund's lost answer is settled
 * from the transaction's refunds, never by sending it again.
 */
export class EredeConnector implements AcquirerConnector {
  readonly name = 'erede';
  private readonly agent: Agent;
  private readonly base: string;

  constructor(opts: EredeOptions) {
    this.agent = acquirerAgent(opts);
    this.base = `${opts.apiUrl.replace(/\/+$/, '')}/v1/transactions`;
    this.timeoutMs = opts.responseTimeoutMs;
  }

  private readonly timeoutMs: number;

  /** Closes the connection pool (a process that stops, a test). */
  close(): Promise<void> {
    return this.agent.close();
  }

  async authorize(cmd: AuthorizeCommand): Promise<AcquirerResult> {
    const account = required(cmd.account);
    if (cmd.resumed) {
      const found = await this.findByReference(account, cmd.transactionId);
      if (found) return found;
    }
    let answer: HttpAnswer;
    try {
      answer = await this.send(account, 'POST', this.base, transactionRequest(cmd));
    } catch (e) {
      if (!(e instanceof AnswerLostError)) throw e;
      return this.resolveLost(account, cmd.transactionId);
    }
    if (answer.status >= 500) return this.resolveLost(account, cmd.transactionId);
    if (answer.status === 401 || answer.status === 403)
      return {
        outcome: 'declined',
        returnCode: String(answer.status),
        returnMessage: "e.Rede refused the merchant's credentials (PV, token)",
        tid: '',
        nsu: '',
      };
    const created = resultOfCreate(answer.body);
    // 42: the reference exists already: an earlier try of this very sale (still in flight when it
    // was looked up, or resumed). Adopted if it is there now; never recorded as a decline.
    if (created.returnCode === '42') return this.resolveLost(account, cmd.transactionId);
    return created;
  }

  async capture(cmd: FollowUpCommand): Promise<AcquirerResult> {
    const account = required(cmd.account);
    const answer = await this.followUp(account, 'PUT', `${this.base}/${encodeURIComponent(cmd.tid)}`, cmd);
    return resultOfFollowUp(answer.body, answer.status, cmd.tid);
  }

  async cancel(cmd: FollowUpCommand): Promise<AcquirerResult> {
    const account = required(cmd.account);
    const answer = await this.followUp(account, 'POST', `${this.base}/${encodeURIComponent(cmd.tid)}/refunds`, cmd);
    return resultOfFollowUp(answer.body, answer.status, cmd.tid);
  }

  async reverse(cmd: FollowUpCommand): Promise<AcquirerResult> {
    const account = required(cmd.account);
    const tid = cmd.tid || (cmd.transactionId ? (await this.findByReference(account, cmd.transactionId))?.tid : undefined);
    if (!tid)
      return {
        outcome: 'approved',
        returnCode: '00',
        returnMessage: 'Nothing to reverse: no such transaction at e.Rede',
        tid: '',
        nsu: '',
      };
    return this.cancel({ ...cmd, tid, amount: undefined });
  }

  async inquire(ref: OperationRef): Promise<AcquirerResult | undefined> {
    const account = required(ref.account);
    if (ref.kind === 'authorize') return this.findByReference(account, ref.transactionId);
    if (!ref.tid) return undefined;
    const found = await this.query(account, `${this.base}/${encodeURIComponent(ref.tid)}`);
    if (!found) return undefined;
    const book = bookOfTransaction(found.body);
    const before = ref.before ?? { captured: 0, cancelled: 0 };
    const moved = ref.kind === 'capture' ? book.captured > before.captured : book.cancelled >= before.cancelled + (ref.amount ?? 1);
    if (!moved) return undefined;
    const t = resultOfTransaction(found.body);
    return {
      ...t,
      outcome: 'approved',
      returnCode: ref.kind === 'capture' ? '00' : '359',
      returnMessage: ref.kind === 'capture' ? 'Captured' : 'Refund accepted',
    };
  }

  async settle(ref: OperationRef): Promise<AcquirerResult> {
    return (await this.inquire(ref)) ?? notReceived(ref.tid);
  }

  /**
   * A sale by its recorded tid; one recorded without a tid by its reference (e.Rede refuses a
   * second create with one reference, code 42, so there is at most one): whatever is found then
   * is a charge the gateway never recorded.
   */
  books(sales: readonly SaleRef[]): Promise<Map<string, SaleBooks>> {
    return booksByOrder(sales, async (s) => {
      const account = required(s.account);
      const url = s.tid ? `${this.base}/${encodeURIComponent(s.tid)}` : `${this.base}?reference=${eredeReference(s.transactionId)}`;
      const found = await this.query(account, url);
      return { found: found ? [bookOfTransaction(found.body)] : [], isSale: () => !!s.tid };
    });
  }

  /** e.Rede publishes no limit on how far back its queries answer: the books count as whole. */
  booksSince(): Date | undefined {
    return undefined;
  }

  /** A capture or refund; after a lost answer only a total one is sent again (a second is refused, never doubled). */
  private async followUp(account: AcquirerAccount, method: 'PUT' | 'POST', url: string, cmd: FollowUpCommand): Promise<HttpAnswer> {
    const body = cmd.amount === undefined ? {} : { amount: cmd.amount };
    for (let attempt = 1; ; attempt++) {
      try {
        const answer = await this.send(account, method, url, body);
        if (answer.status < 500) return answer;
      } catch (e) {
        if (!(e instanceof AnswerLostError)) throw e;
      }
      if (cmd.amount !== undefined || attempt >= 2) throw new AcquirerUnreachableError(this.name, 'erede: the operation got no answer');
    }
  }

  /**
   * What became of a create whose answer was lost (no answer, or a 5xx: a proxy in front of e.Rede may
   * answer while the request goes on), asked by its order id: adopted if e.Rede has it. If not yet,
   * the outcome stays unknown: the sale waits at status 0 and the reconciler asks again before it
   * declines it (and voids whatever it finds then).
   */
  private async resolveLost(account: AcquirerAccount, transactionId: string): Promise<AcquirerResult> {
    let found: AcquirerResult | undefined;
    try {
      found = await this.findByReference(account, transactionId);
    } catch {
      throw new AcquirerUnreachableError(this.name, 'erede: the sale got no answer and the query failed too');
    }
    if (found) return found;
    throw new AcquirerUnreachableError(this.name, 'erede: the sale got no answer, and e.Rede has no record of it yet');
  }

  private async findByReference(account: AcquirerAccount, transactionId: string): Promise<AcquirerResult | undefined> {
    const found = await this.query(account, `${this.base}?reference=${eredeReference(transactionId)}`);
    return found && resultOfTransaction(found.body);
  }

  /** GET; undefined for 404; any other failure is an outage (thrown). */
  private async query(account: AcquirerAccount, url: string): Promise<HttpAnswer | undefined> {
    let answer: HttpAnswer;
    try {
      answer = await this.send(account, 'GET', url);
    } catch (e) {
      if (e instanceof AnswerLostError) throw new AcquirerUnreachableError(this.name, e.message);
      throw e;
    }
    if (answer.status === 404) return undefined;
    // Refused credentials are this merchant's problem, not an outage: they must not open the breaker for everyone.
    if (answer.status >= 400 && answer.status < 500)
      throw new Error(`erede: query refused with HTTP ${answer.status}: check the merchant's account`);
    if (answer.status !== 200) throw new AcquirerUnreachableError(this.name, `erede: query answered HTTP ${answer.status}`);
    return answer;
  }

  private send(account: AcquirerAccount, method: 'GET' | 'POST' | 'PUT', url: string, body?: unknown): Promise<HttpAnswer> {
    return callAcquirer(this.agent, this.name, url, {
      method,
      headers: {
        'content-type': 'application/json',
        accept: 'application/json',
        authorization: `Basic ${Buffer.from(`${account.account}:${account.secret}`).toString('base64')}`,
        'transaction-response': 'brand-return-opened',
      },
      body,
      timeoutMs: this.timeoutMs,
    });
  }
}

function required(account: AcquirerAccount | undefined): AcquirerAccount {
  if (!account) throw new AcquirerUnavailableError('erede', "erede: no account: a production merchant's sale needs one");
  return account;
}
