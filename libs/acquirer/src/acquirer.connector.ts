/**
 * The one interface an acquirer plugs in through; the sandbox is its first implementation.
 *
 * Every call carries an `operationKey` derived from the gateway's transaction (and its status
 * version): a connector must treat a repeated key as the same operation and answer it again
 * without acting twice. That is what makes a redelivered job after a crash safe: never a second
 * charge. An `outcome: 'timeout'` means the acquirer's answer is unknown; the caller must
 * `reverse` before declining, so a card is never left charged with an unknown outcome.
 */
export interface AuthorizeCommand {
  operationKey: string;
  acquirer: number;
  pan: string;
  expYear: number;
  expMonth: number;
  holder: string;
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

export interface FollowUpCommand {
  operationKey: string;
  tid: string;
  amount?: number;
}

export interface AcquirerResult {
  outcome: 'approved' | 'declined' | 'timeout';
  returnCode: string;
  returnMessage: string;
  authorizationCode?: string;
  tid: string;
  nsu: string;
  /** Set by `fence` only: the acquirer never received the operation, and its key is closed. */
  voided?: true;
}

export interface AcquirerConnector {
  authorize(cmd: AuthorizeCommand): Promise<AcquirerResult>;
  capture(cmd: FollowUpCommand): Promise<AcquirerResult>;
  cancel(cmd: FollowUpCommand): Promise<AcquirerResult>;
  reverse(cmd: FollowUpCommand): Promise<AcquirerResult>;
  /**
   * What became of an operation, when the acquirer knows it (acquirers answer queries by the
   * merchant's order key); undefined when it never reached them. Never acts.
   */
  inquire(operationKey: string): Promise<AcquirerResult | undefined>;
  /**
   * Settles what became of a capture or cancel whose answer was lost (a crash, a timeout): the
   * result that stands for the key. If the call never reached the acquirer, the key is closed as
   * refused first, so the call can no longer act should it arrive late (acquirers void by order
   * key). After this, the gateway can record the answer as final.
   */
  fence(operationKey: string, kind: 'capture' | 'cancel'): Promise<AcquirerResult>;
  /** What the acquirer's own books say of these authorizations (by tid): reconciliation's other side. */
  books(tids: readonly string[]): Promise<Map<string, AcquirerBook>>;
  /** The authorizations (tids) the acquirer did anything with since a time, whatever the gateway recorded. */
  touchedSince(since: Date): Promise<string[]>;
  /**
   * How far back the books go at `now` (a sandbox prunes its call log, RETENTION_SANDBOX_CALLS);
   * undefined when they are whole. Reconciliation compares only authorizations made since then.
   */
  booksSince(now: Date): Date | undefined;
}

/** One authorization as the acquirer's report or settlement file has it. */
export interface AcquirerBook {
  tid: string;
  /** Approved and not reversed. */
  approved: boolean;
  /** Cents captured (a sale's authorization captures its amount) and cancelled, in total. */
  captured: number;
  cancelled: number;
}

export const ACQUIRER_CONNECTOR = Symbol('ACQUIRER_CONNECTOR');
