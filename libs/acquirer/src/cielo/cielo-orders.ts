import {
  AcquirerAccount,
  AcquirerResult,
  AcquirerUnavailableError,
  AcquirerUnreachableError,
  FollowUpCommand,
  SaleBooks,
  SaleRef,
} from '../acquirer.connector';
import { booksByOrder } from '../outcomes';
import { AnswerLostError, HttpAnswer } from '../http';
import { bookOfSale, cieloOrderId, CieloStatus, member, paymentIdsOf, resultOfSale } from './cielo.wire';

/** One request to Cielo with a merchant's credentials (the connector's connection pool). */
export type CieloSend = (account: AcquirerAccount, method: 'GET' | 'POST' | 'PUT', url: string, body?: unknown) => Promise<HttpAnswer>;

/** Voids one PaymentId whole (the connector's void), for the duplicates an adoption leaves. */
export type CieloVoidWhole = (account: AcquirerAccount, cmd: FollowUpCommand, saleRef: string) => Promise<AcquirerResult>;

export interface OrderSale {
  paymentId: string;
  sale: unknown;
}

/**
 * Cielo's query host, read by MerchantOrderId: Cielo keeps every create of one order id, so a
 * sale is found (and adopted, and booked) by its order id, never by a create sent again.
 */
export class CieloOrders {
  constructor(
    private readonly queryUrl: string,
    private readonly send: CieloSend,
  ) {}

  /**
   * The sale an earlier try of this create made, if Cielo has it: a create is adopted, never sent
   * twice. Cielo keeps every create under one MerchantOrderId, so two tries of one sale (a worker
   * whose claim lapsed while its create was in flight, and one that resumed it, looked, found
   * nothing yet and created again) make two PaymentIds. The sale must stand on one charge only:
   * the one `standingSale` picks is adopted and every other that holds money, or may yet, is
   * voided whole here, so the card is not charged twice for one sale. The pick is the first in
   * Cielo's list, which only grows at its end: every worker that looks picks the same one, and
   * none voids what another adopted. A worker that records its own create's answer (not a
   * lookup) may still record another PaymentId; then the two disagree in reconciliation, which
   * also reports any void refused or unanswered here: a charge left over is reported, never lost.
   */
  async adoptByOrder(account: AcquirerAccount, transactionId: string, voidWhole: CieloVoidWhole): Promise<AcquirerResult | undefined> {
    const found = await this.salesByOrder(account, transactionId);
    const standing = standingSale(found);
    if (!standing) return undefined;
    for (const other of found) {
      if (other === standing || !mayHoldMoney(other.sale)) continue;
      const cmd = { operationKey: `${transactionId}-duplicate-${other.paymentId}`, tid: '', transactionId, account };
      await voidWhole(account, cmd, other.paymentId).catch(() => undefined);
    }
    return resultOfSale(standing.sale);
  }

  /** The sale that stands under a transaction's order id, if Cielo has it; never acts. */
  async findByOrder(account: AcquirerAccount, transactionId: string): Promise<AcquirerResult | undefined> {
    const standing = standingSale(await this.salesByOrder(account, transactionId));
    return standing && resultOfSale(standing.sale);
  }

  /**
   * Every PaymentId under each sale's MerchantOrderId (Cielo keeps every create of one order id),
   * plus its recorded PaymentId: the recorded one is the sale (by PaymentId, else by tid); each
   * other is a charge the gateway never recorded.
   */
  books(sales: readonly SaleRef[]): Promise<Map<string, SaleBooks>> {
    return booksByOrder(sales, async (s) => {
      const found = (await this.salesByOrder(required(s.account), s.transactionId, s.saleRef)).map(({ paymentId, sale }) => ({
        ...bookOfSale(sale),
        saleRef: paymentId,
      }));
      return { found, isSale: (b) => (s.saleRef ? b.saleRef === s.saleRef : !!s.tid && b.tid === s.tid) };
    });
  }

  /** Every sale Cielo holds under a transaction's MerchantOrderId (and `also`, a PaymentId recorded for it), in Cielo's order. */
  async salesByOrder(account: AcquirerAccount, transactionId: string, also?: string): Promise<OrderSale[]> {
    const ids = await this.paymentIdsByOrder(account, transactionId);
    if (also && !ids.includes(also)) ids.push(also);
    const out: OrderSale[] = [];
    for (const paymentId of ids) {
      const sale = await this.readSale(account, paymentId);
      if (sale) out.push({ paymentId, sale });
    }
    return out;
  }

  /** A follow-up's PaymentId when none was recorded: the sale that stands under the order id. */
  async paymentIdOf(account: AcquirerAccount, transactionId: string): Promise<string | undefined> {
    return standingSale(await this.salesByOrder(account, transactionId))?.paymentId;
  }

  async paymentIdsByOrder(account: AcquirerAccount, transactionId: string): Promise<string[]> {
    const answer = await this.queryOrThrow(account, `${this.queryUrl}1/sales?merchantOrderId=${cieloOrderId(transactionId)}`);
    return answer ? paymentIdsOf(answer.body) : [];
  }

  async readSale(account: AcquirerAccount, paymentId: string): Promise<unknown> {
    return (await this.queryOrThrow(account, `${this.queryUrl}1/sales/${encodeURIComponent(paymentId)}`))?.body;
  }

  /** A query's answer; undefined for 404; anything else but 200 is an outage (thrown). */
  private async queryOrThrow(account: AcquirerAccount, url: string): Promise<HttpAnswer | undefined> {
    let answer: HttpAnswer;
    try {
      answer = await this.send(account, 'GET', url);
    } catch (e) {
      if (e instanceof AnswerLostError) throw new AcquirerUnreachableError('cielo', e.message);
      throw e;
    }
    if (answer.status === 404) return undefined;
    // Refused credentials are this merchant's problem, not an outage: they must not open the breaker for everyone.
    if (answer.status >= 400 && answer.status < 500)
      throw new Error(`cielo: query refused with HTTP ${answer.status}: check the merchant's account`);
    if (answer.status !== 200) throw new AcquirerUnreachableError('cielo', `cielo: query answered HTTP ${answer.status}`);
    return answer;
  }
}

const statusOf = (sale: unknown) => Number(member(member(sale, 'Payment'), 'Status'));
const HOLDING: number[] = [CieloStatus.Authorized, CieloStatus.PaymentConfirmed];
const UNDECIDED: number[] = [CieloStatus.NotFinished, CieloStatus.Pending];

/** Authorized or captured (a partial void still holds the rest), or still undecided (0, 12: it may yet become a charge). */
export function mayHoldMoney(sale: unknown): boolean {
  const status = statusOf(sale);
  return HOLDING.includes(status) || UNDECIDED.includes(status);
}

/** The one sale of several under one order id that stands: the first holding money, else the first undecided, else the last. */
function standingSale(found: OrderSale[]): OrderSale | undefined {
  return (
    found.find((f) => HOLDING.includes(statusOf(f.sale))) ??
    found.find((f) => UNDECIDED.includes(statusOf(f.sale))) ??
    found[found.length - 1]
  );
}

export function required(account: AcquirerAccount | undefined): AcquirerAccount {
  if (!account) throw new AcquirerUnavailableError('cielo', "cielo: no account: a production merchant's sale needs one");
  return account;
}
