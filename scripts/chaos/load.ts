import { withLastDigit } from '@app/card';
import { Random } from './random';
import type { Merchant } from './stack';

/** The card numbers the run sends (a visa series of its own, one per last digit) and its one security code. */
export const CHAOS_CARD_BASE = '4929170000000000';
export const chaosCard = (digit: number): string => withLastDigit(CHAOS_CARD_BASE, digit);
export const CHAOS_SECURITY_CODE = '0739';
/** What every card number of the run starts with: a log line or body holding it holds (most of) a card number. */
export const CHAOS_CARD_PREFIX = CHAOS_CARD_BASE.slice(0, 12);

/** Whether a text holds a card number or the security code of the run (a masked number, 492917******1234, does not). */
export function leaksCardData(text: string): boolean {
  return text.includes(CHAOS_CARD_PREFIX) || text.includes(EREDE_DECLINED_CARD) || SECURITY_CODE_PATTERN.test(text);
}
/** The code as a value of its own: not inside a longer number, a word, base64 or a UUID. */
const SECURITY_CODE_PATTERN = new RegExp(`(?<![0-9A-Za-z+/.-])${CHAOS_SECURITY_CODE}(?![0-9A-Za-z+/.-])`);
/** e.Rede's simulator declines this one (105, restricted); it approves the chaos series. */
export const EREDE_DECLINED_CARD = '4000000000000002';

/** One request the run made, as it ended. */
export interface Call {
  id: number;
  flow: Flow;
  op: 'sale' | 'authorize' | 'capture' | 'cancel' | 'token/add' | 'rebill';
  merchant: Merchant['kind'];
  merchantId: string;
  /** order.reference of a sale, authorization or rebill. */
  reference?: string;
  /** The api replica it went to (api-1, api-2). */
  api: string;
  startedAt: number;
  endedAt: number;
  /** The HTTP status, or 0: no answer (the connection failed or the 30 s limit ran out). */
  http: number;
  transactionId?: string;
  /** The transaction's status in the answer, and its statusVersion. */
  status?: string;
  statusVersion?: number;
  /** The answer's processor.capturedAmount and cancelledAmount (captures, cancels). */
  capturedAmount?: number;
  cancelledAmount?: number;
  /** The answer held card data of the run. */
  leaked?: boolean;
  error?: string;
}

export type Flow = 'sale' | 'authorize' | 'production' | 'token-sale' | 'rebill';

/** How often each flow starts, of every 100. */
const MIX: Record<Flow, number> = { sale: 40, authorize: 20, production: 20, 'token-sale': 12, rebill: 8 };

const REQUEST_TIMEOUT_MS = 30_000;

/**
 * The run's load: `rate` flows a second, open loop (a slow gateway gets more at once, at most
 * `maxInFlight`, as merchants' traffic does not wait), mixed as MIX says, each flow's choices drawn
 * from the seed. Sales of the test merchant (on the sandbox) and of production merchants on codes
 * 26 and 27 (the simulators), authorizations with partial captures and cancels (half of them a
 * capture and a cancel of one transaction sent at once), token sales and rebills, every one with
 * the listener as urlReturn.
 */
export class Load {
  readonly calls: Call[] = [];
  skipped = 0;
  private inFlight = 0;
  private flows = 0;
  private nextId = 0;
  private refs = 0;
  private running = new Set<Promise<void>>();
  private stopped = false;

  constructor(
    private readonly seed: number,
    private readonly apiUrls: string[],
    private readonly merchants: Record<Merchant['kind'], Merchant>,
    private readonly urlReturn: (m: Merchant) => string,
    private readonly runTag: string,
    private readonly maxInFlight = 400,
  ) {}

  /** Starts flows at `rate` a second until `until` (ms since epoch) or stop(). */
  async drive(rate: number, until: number): Promise<void> {
    const started = Date.now();
    let launched = 0;
    while (!this.stopped && Date.now() < until) {
      const due = Math.floor(((Date.now() - started) / 1000) * rate);
      for (; launched < due; launched++) {
        if (this.inFlight >= this.maxInFlight) {
          this.skipped++;
          continue;
        }
        // Each flow draws from a stream of its own (the seed and its number), so the mix and each
        // flow's choices are the seed's whatever the answers' timing.
        const r = new Random((this.seed ^ Math.imul(++this.flows, 0x9e3779b1)) >>> 0);
        const p = this.flow(r, r.weighted(MIX)).finally(() => this.running.delete(p));
        this.running.add(p);
      }
      await new Promise((r) => setTimeout(r, 20));
    }
  }

  /** Waits for the flows in flight. */
  async settle(): Promise<void> {
    this.stopped = true;
    while (this.running.size > 0) await Promise.all([...this.running]);
  }

  private async flow(r: Random, flow: Flow): Promise<void> {
    this.inFlight++;
    try {
      if (flow === 'sale') await this.sale(r, flow, this.merchants.sandbox, 'sale', this.sandboxDigit(r));
      else if (flow === 'authorize') await this.authorizeThenSettle(r, flow, this.merchants.sandbox);
      else if (flow === 'production') {
        const m = r.next() < 0.5 ? this.merchants.cielo : this.merchants.erede;
        if (r.next() < 0.3) await this.authorizeThenSettle(r, flow, m);
        else await this.sale(r, flow, m, 'sale', r.next() < 0.85 ? 1 : 2);
      } else if (flow === 'token-sale') await this.tokenSale(r);
      else await this.rebill(r);
    } finally {
      this.inFlight--;
    }
  }

  /** Mostly approvals; declines, the sandbox's timeout (…8) and its slow approval (…9) too. */
  private sandboxDigit(r: Random): number {
    return r.pick([0, 1, 4, 6, 0, 1, 4, 6, 0, 1, 4, 6, 2, 3, 5, 7, 8, 9, 9]);
  }

  private reference(prefix: string): string {
    return `${this.runTag}-${prefix}-${++this.refs}`;
  }

  private cardFor(m: Merchant, digit: number): string {
    return m.kind === 'erede' && digit === 2 ? EREDE_DECLINED_CARD : chaosCard(digit);
  }

  private async sale(r: Random, flow: Flow, m: Merchant, op: 'sale' | 'authorize', digit: number): Promise<Call> {
    const amount = r.int(1_000, 50_000);
    const code = m.kind === 'erede' ? 27 : 26;
    return this.call(flow, op, m, this.reference(op === 'sale' ? 'S' : 'A'), {
      order: { reference: '', totalAmount: amount },
      payment: {
        acquirer: code,
        method: 1,
        amount,
        currency: '986',
        country: 'BRA',
        numberOfPayments: 1,
        flag: 'visa',
        cardHolder: 'CHAOS RUN',
        cardNumber: this.cardFor(m, digit),
        cardSecurityCode: CHAOS_SECURITY_CODE,
        cardExpirationDate: '203012',
      },
      billing: { name: 'Chaos', email: 'chaos@example.com' },
      urlReturn: this.urlReturn(m),
    });
  }

  /**
   * An authorization, then either a partial capture and a partial cancel sent at once (one of
   * them may be refused: a partially cancelled authorization cannot be captured), or a partial
   * capture, then a partial refund, then the rest refunded.
   */
  private async authorizeThenSettle(r: Random, flow: Flow, m: Merchant): Promise<void> {
    const auth = await this.sale(r, flow, m, 'authorize', 1);
    if (auth.http !== 200 || auth.status !== '3' || !auth.transactionId) return;
    const id = auth.transactionId;
    if (r.next() < 0.5) {
      await Promise.all([this.operation(flow, m, 'capture', id, 700), this.operation(flow, m, 'cancel', id, 300)]);
    } else {
      const captured = await this.operation(flow, m, 'capture', id, 800);
      if (captured.http !== 200) return;
      const partial = await this.operation(flow, m, 'cancel', id, 200);
      if (partial.http === 200) await this.operation(flow, m, 'cancel', id);
    }
  }

  private operation(flow: Flow, m: Merchant, op: 'capture' | 'cancel', transactionId: string, amount?: number): Promise<Call> {
    return this.call(flow, op, m, undefined, { transactionId, ...(amount ? { amount } : {}) });
  }

  private async tokenSale(r: Random): Promise<void> {
    const m = this.merchants.sandbox;
    const added = await this.request('token-sale', 'token/add', m, undefined, '/v1/token/add', {
      tokencard: { cardNumber: chaosCard(r.pick([0, 1, 4, 6])), cardHolder: 'CHAOS TOKEN', cardExpirationDate: '203012' },
    });
    const token = (added.body as { TokenCard?: string } | undefined)?.TokenCard;
    if (added.call.http !== 200 || !token) return;
    const amount = r.int(1_000, 20_000);
    await this.call('token-sale', 'sale', m, this.reference('T'), {
      order: { reference: '', totalAmount: amount },
      payment: { acquirer: 26, method: 1, amount, currency: '986', country: 'BRA', flag: 'visa', tokenCard: token },
      urlReturn: this.urlReturn(m),
    });
  }

  /** A daily rebill starting today: its first cycle is charged as it is made, the next ones as they fall due. */
  private async rebill(r: Random): Promise<void> {
    const m = this.merchants.sandbox;
    const amount = r.int(500, 5_000);
    const today = new Date().toISOString().slice(0, 10);
    const end = new Date(Date.now() + 30 * 86_400_000).toISOString().slice(0, 10);
    await this.call('rebill', 'rebill', m, this.reference('R'), {
      order: { reference: '', totalAmount: amount, period: 1, frequency: 1, dateStart: today, dateEnd: end },
      paymentCreditCard: {
        acquirer: 26,
        amount,
        currency: '986',
        country: 'BRA',
        numberOfPayments: 1,
        flag: 'visa',
        cardHolder: 'CHAOS REBILL',
        cardNumber: chaosCard(r.pick([0, 1, 4, 6, 6, 2])),
        cardExpirationDate: '203012',
        cardSecurityCode: CHAOS_SECURITY_CODE,
      },
      urlReturn: this.urlReturn(m),
    });
  }

  /** A /v1/receiver operation; `body.order.reference` is set to `reference`. */
  private async call(flow: Flow, op: Call['op'], m: Merchant, reference: string | undefined, body: Record<string, unknown>): Promise<Call> {
    if (reference) (body.order as { reference: string }).reference = reference;
    return (await this.request(flow, op, m, reference, '/v1/receiver', { [op]: body })).call;
  }

  private async request(
    flow: Flow,
    op: Call['op'],
    m: Merchant,
    reference: string | undefined,
    path: string,
    operation: Record<string, unknown>,
  ): Promise<{ call: Call; body: unknown }> {
    const id = ++this.nextId;
    const replica = id % this.apiUrls.length;
    const base = this.apiUrls[replica];
    const call: Call = {
      id,
      flow,
      op,
      merchant: m.kind,
      merchantId: m.merchantId,
      reference,
      api: `api-${replica + 1}`,
      startedAt: Date.now(),
      endedAt: 0,
      http: 0,
      // A capture's or cancel's transaction, answered or not.
      transactionId: (Object.values(operation)[0] as { transactionId?: string } | undefined)?.transactionId?.toLowerCase(),
    };
    let body: unknown;
    try {
      const res = await fetch(`${base}${path}`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({
          'transaction-request': { version: '1.0.0', verification: { merchantId: m.merchantId, merchantKey: m.merchantKey }, ...operation },
        }),
        signal: AbortSignal.timeout(REQUEST_TIMEOUT_MS),
      });
      call.http = res.status;
      const text = await res.text();
      call.leaked = leaksCardData(text);
      try {
        body = JSON.parse(text);
      } catch {
        call.error = `not JSON: ${text.slice(0, 120)}`;
      }
      const answer = body as Answer | undefined;
      call.transactionId = answer?.transactionId?.toLowerCase() ?? call.transactionId;
      call.status = answer?.status;
      call.statusVersion = answer?.statusVersion === undefined ? undefined : Number(answer.statusVersion);
      call.capturedAmount = answer?.processor?.capturedAmount === undefined ? undefined : Number(answer.processor.capturedAmount);
      call.cancelledAmount = answer?.processor?.cancelledAmount === undefined ? undefined : Number(answer.processor.cancelledAmount);
      if (res.status >= 400) call.error = `${answer?.result?.error?.code ?? ''} ${answer?.result?.error?.message ?? ''}`.trim();
    } catch (e) {
      call.error = (e as Error).message;
    }
    call.endedAt = Date.now();
    this.calls.push(call);
    return { call, body };
  }
}

/** What the load reads of an answer (a TransactionResponse, or an error body). */
interface Answer {
  transactionId?: string;
  status?: string;
  statusVersion?: string;
  processor?: { capturedAmount?: string; cancelledAmount?: string };
  result?: { error?: { code?: string; message?: string } };
}
