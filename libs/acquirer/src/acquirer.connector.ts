/**
 * The one interface an acquirer plugs in through. Three implementations: the built-in sandbox
 * (test merchants), Cielo API 3.0 (code 26) and e.Rede (code 27).
 *
 * What a real acquirer offers, and so what this interface promises:
 * - **No idempotent create.** A resent sale can charge twice. Every authorization carries an order
 *   id the connector derives from the gateway's transaction id and sends to the acquirer; a create
 *   that may have been sent before (`resumed`) is first looked up by that order id, and a create
 *   whose answer was lost is resolved the same way before anything is resent.
 * - **No way to close an operation key.** A capture or cancel whose answer was lost is settled from
 *   the sale's own amounts at the acquirer (`settle`): applied if the acquirer's captured or voided
 *   amount moved by it, not applied otherwise. The sandbox, which can close a key, does so.
 * - **Queries only.** No list by date on Cielo or e.Rede: `touchedSince` is the sandbox's only;
 *   reconciliation reads the books of the sales the gateway recorded, as far back as the acquirer
 *   answers (`booksSince`).
 *
 * An `outcome: 'timeout'` from `authorize` means the acquirer's answer is unknown even after
 * asking it: the caller reverses before declining, so a card is never left charged with an unknown
 * outcome. `AcquirerUnavailableError` means the acquirer was not reached (or its breaker is open)
 * and nothing was done.
 */

/** A merchant's own account at an acquirer (production merchants only; the sandbox needs none). */
export interface AcquirerAccount {
  /** Cielo: MerchantId (a GUID); e.Rede: the affiliation number (PV). */
  account: string;
  /** Cielo: MerchantKey; e.Rede: the token. Never logged, never answered. */
  secret: string;
}

export interface AuthorizeCommand {
  /** The gateway's transaction id; the connector derives the order id it sends from it. */
  transactionId: string;
  /** Sandbox only: the key its call log dedupes on (`<transaction id>-authorize`). */
  operationKey: string;
  acquirer: number;
  account?: AcquirerAccount;
  /** This command may have reached the acquirer before (a redelivered job): look it up first. */
  resumed?: boolean;
  pan: string;
  expYear: number;
  expMonth: number;
  holder: string;
  /** The card's brand as the gateway detected it (visa, mastercard, amex, elo, …). */
  brand?: string;
  securityCode?: string;
  amount: number; // cents
  currency: string;
  instalments: number;
  capture: boolean; // sale = true, authorize only = false
  softDescriptor?: string;
  /**
   * Who starts the charge: the card holder (a sale, a rebill's first charge with its security
   * code), or the merchant on a card on file (a rebill's later cycles and retries: a
   * merchant-initiated transaction, without security code). Acquirers flag the latter as recurring.
   */
  initiator?: 'customer' | 'merchant';
}

/** A capture, a cancel or a reversal of one authorization. */
export interface FollowUpCommand {
  operationKey: string;
  /** The acquirer's transaction id (Cielo's Tid, e.Rede's tid). */
  tid: string;
  /** The acquirer's own reference for follow-ups when it is not the tid (Cielo: PaymentId). */
  saleRef?: string;
  /** The gateway's transaction id (the order id is derived from it). */
  transactionId?: string;
  account?: AcquirerAccount;
  /** Cents; absent = the whole remaining amount. */
  amount?: number;
}

/** What the gateway knows of one operation, enough to ask the acquirer what became of it. */
export interface OperationRef {
  operationKey: string;
  kind: 'authorize' | 'capture' | 'cancel';
  transactionId: string;
  account?: AcquirerAccount;
  tid?: string;
  saleRef?: string;
  /** A capture's or cancel's cents. */
  amount?: number;
  /** The cents captured and cancelled the gateway recorded before this operation. */
  before?: { captured: number; cancelled: number };
}

export interface AcquirerResult {
  outcome: 'approved' | 'declined' | 'timeout';
  returnCode: string;
  returnMessage: string;
  authorizationCode?: string;
  tid: string;
  nsu: string;
  /** The acquirer's reference for follow-ups when it is not the tid (Cielo: PaymentId). */
  saleRef?: string;
  /** Set by `settle` only: the acquirer never acted on the operation; the gateway records it as not done. */
  voided?: true;
}

export interface AcquirerConnector {
  /** The connector's name, recorded on each transaction it decides (`sandbox`, `cielo`, `erede`). */
  readonly name: string;
  authorize(cmd: AuthorizeCommand): Promise<AcquirerResult>;
  capture(cmd: FollowUpCommand): Promise<AcquirerResult>;
  cancel(cmd: FollowUpCommand): Promise<AcquirerResult>;
  /**
   * Undoes an authorization whose outcome was unknown (or that nobody will record): a total void,
   * of every charge the acquirer holds under the sale's order id when `transactionId` is given.
   */
  reverse(cmd: FollowUpCommand): Promise<AcquirerResult>;
  /**
   * What became of an operation, when the acquirer knows it (by order id for an authorization, by
   * the sale's amounts for a capture or cancel); undefined when it never reached the acquirer.
   * Never acts.
   */
  inquire(ref: OperationRef): Promise<AcquirerResult | undefined>;
  /**
   * Settles a capture or cancel whose answer was lost (a crash, a timeout): the result that stands.
   * The sandbox closes the key first, so a late call can no longer act; Cielo and e.Rede cannot,
   * so their answer is read from the sale's amounts (a call that lands later still shows in
   * reconciliation). After this the gateway records the answer as final.
   */
  settle(ref: OperationRef): Promise<AcquirerResult>;
  /**
   * What the acquirer's own books say of these sales, by the gateway's transaction id:
   * reconciliation's other side. A real acquirer also reads every other charge it holds under a
   * sale's order id (a create the gateway never recorded: its answer was lost and the sale was
   * declined without a tid, or a second create of one sale at Cielo).
   */
  books(sales: readonly SaleRef[]): Promise<Map<string, SaleBooks>>;
  /** The sales (tids) the acquirer did anything with since a time, when it can list them (the sandbox). */
  touchedSince?(since: Date): Promise<string[]>;
  /** How far back the books answer at `now`; undefined when they are whole. */
  booksSince(now: Date): Date | undefined;
}

/** One sale as reconciliation asks the acquirer about it. */
export interface SaleRef {
  /** The acquirer's tid the gateway recorded; absent when it recorded none (the create's answer never came). */
  tid?: string;
  saleRef?: string;
  transactionId: string;
  account?: AcquirerAccount;
}

/** What an acquirer holds under one sale's order id. */
export interface SaleBooks {
  /** The charge the gateway recorded (by its tid, or Cielo's PaymentId), when the acquirer has it. */
  sale?: AcquirerBook;
  /** Every other charge under the same order id, as the acquirer lists them: none, unless a create went unrecorded. */
  others: AcquirerBook[];
}

/** One authorization as the acquirer's report has it. */
export interface AcquirerBook {
  tid: string;
  /** Cielo's PaymentId. */
  saleRef?: string;
  /** Approved and not reversed. */
  approved: boolean;
  /** Cents captured (a sale's authorization captures its amount) and cancelled, in total. */
  captured: number;
  cancelled: number;
  /** The authorized cents, when the acquirer says (a wholly voided, never-recorded charge is a reversal). */
  amount?: number;
}

/** The acquirer was not reached, or refused before acting (its breaker is open): nothing was done. */
export class AcquirerUnavailableError extends Error {
  constructor(
    readonly acquirer: string,
    message: string,
  ) {
    super(message);
    this.name = 'AcquirerUnavailableError';
  }
}

/** The acquirer may have acted but its answer is unknown, and asking it failed too: try again later. */
export class AcquirerUnreachableError extends Error {
  constructor(
    readonly acquirer: string,
    message: string,
  ) {
    super(message);
    this.name = 'AcquirerUnreachableError';
  }
}

export const ACQUIRER_CONNECTOR = Symbol('ACQUIRER_CONNECTOR');
