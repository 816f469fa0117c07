import type { TransactionEvent } from '@app/contracts';
import type { PublishedCursor } from '@app/platform';
/** 'held': recorded while its listener is disabled, not attempted until the listener is enabled again. */
export const DELIVERY_STATUSES = ['pending', 'sending', 'succeeded', 'failed', 'blocked', 'held'] as const;
export type DeliveryStatus = (typeof DELIVERY_STATUSES)[number];
export type AttemptErrorClass = 'timeout' | 'dns' | 'connect' | 'tls' | 'ssrf_blocked' | 'http_status';

/** Where a keyset walk over deliveries has got to, in (created_at, id) order: the overdue sweep's, a release of held ones. */
export interface DeliveryCursor {
  /** As Postgres prints it: a JavaScript Date would drop the microseconds and never move past a tie. */
  createdAt: string;
  id: string;
}

export type OverdueCursor = DeliveryCursor;

export interface DeliveryRow {
  id: string;
  merchant_id: string;
  transaction_id: string;
  status_version: number;
  event: string;
  url: string;
  /** The listener (scheme://host:port of `url`); null for deliveries created before listeners were tracked. */
  origin: string | null;
  body: string;
  status: DeliveryStatus;
  attempts: number;
  replays: number;
  next_attempt_at: Date | null;
  last_http_status: number | null;
  last_error: string | null;
  created_at: Date;
  updated_at: Date;
  succeeded_at: Date | null;
}

export interface AttemptRecord {
  startedAt: Date;
  durationMs: number;
  httpStatus?: number;
  errorClass?: AttemptErrorClass;
  responseBody?: string;
  /** The trace the attempt was made in, when traced. */
  traceId?: string;
}

export interface NewDelivery {
  merchantId: string;
  transactionId: string;
  statusVersion: number;
  event: string;
  url: string;
  /** The listener's origin (listenerOrigin of `url`); null: never held (a URL without one). */
  origin: string | null;
  body: string;
}

export type Created = { row: DeliveryRow; created: boolean };
export type NewDeliveryClaim = NewDelivery & { claim: boolean };
export type FinishedAttempt = {
  id: string;
  attempt: number;
  a: AttemptRecord;
  next: { status: DeliveryStatus; nextAttemptAt?: Date; error?: string };
};

/** A status change the outbox published; `payload` only while no delivery exists for it. */
export interface PublishedStatusChange extends PublishedCursor {
  payload: TransactionEvent | null;
}
