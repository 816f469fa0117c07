/**
 * Message patterns (one BullMQ queue each). A pattern name is also its queue name (or, with
 * QUEUE_PARTITIONS above 1, its partitions' `<pattern>#<i>`), so it must not contain ':' and must
 * not be all digits (BullMQ rejects both).
 */
export const Patterns = {
  TokenAdd: 'token.add',
  TokenRetrieve: 'token.retrieve',
  CardAuthorize: 'card.authorize',
  CardCapture: 'card.capture',
  CardCancel: 'card.cancel',
} as const;
export type Pattern = (typeof Patterns)[keyof typeof Patterns];

/** Durable events (emit): consumers may come later; the queue holds them until then. */
export const Events = {
  TransactionStatusChanged: 'transaction.status_changed',
  TransactionCaptured: 'transaction.captured',
  TransactionCancelled: 'transaction.cancelled',
} as const;
export type EventName = (typeof Events)[keyof typeof Events];

/** The queues every sale goes through: the busiest, and the ones a cluster must spread over its masters. */
export const SALE_PATH_QUEUES: readonly string[] = [
  Patterns.CardAuthorize,
  Patterns.CardCapture,
  Patterns.CardCancel,
  Patterns.TokenAdd,
  Events.TransactionStatusChanged,
  Events.TransactionCaptured,
];

/** Which patterns each worker must handle; a worker refuses to boot when one has no handler. */
export const WorkerPatterns = {
  tokenizer: [Patterns.TokenAdd, Patterns.TokenRetrieve, Patterns.CardAuthorize, Patterns.CardCapture, Patterns.CardCancel],
  settlement: [Events.TransactionCaptured, Events.TransactionCancelled] as string[],
  notifier: [Events.TransactionStatusChanged] as string[],
} as const;
