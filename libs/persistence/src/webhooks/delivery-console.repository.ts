import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource } from 'typeorm';
import type { DeliveryStatus } from './delivery-rows';

/** Where a page of the console's delivery list stopped (newest first: creation time, then id). */
export interface DeliveryPageCursor {
  /** As Postgres prints it, microseconds included (a JavaScript Date would drop them and repeat a row). */
  createdAt: string;
  id: string;
}

export interface DeliveryListFilter {
  merchantId?: string;
  status?: DeliveryStatus;
  /** The listener's host name, as in its URL (compared lower-cased). */
  host?: string;
  transactionId?: string;
  event?: string;
  from?: Date;
  to?: Date;
  after?: DeliveryPageCursor;
  limit: number;
}

export interface DeliveryListRow {
  id: string;
  merchant_id: string;
  transaction_id: string;
  event: string;
  url: string;
  status: DeliveryStatus;
  attempts: number;
  next_attempt_at: Date | null;
  last_http_status: number | null;
  last_error_class: string | null;
  created_at: Date;
  cursor: string;
}

export interface DeliveryOverview {
  backlog: { status: DeliveryStatus; n: number }[];
  oldestOpen: { id: string; created_at: Date; url: string; status: DeliveryStatus } | undefined;
  failingListeners: { merchant_id: string; host: string; failed: number; last_failed_at: Date }[];
  /** Attempts per minute over the last 24 h: minute start (epoch seconds), succeeded, failed. */
  perMinute: { minute: number; succeeded: number; failed: number }[];
}

/** The host of a listener URL in SQL (scheme, optional user info, then the host up to a port or path). */
const HOST_OF = `lower(substring(url from '^[A-Za-z][A-Za-z0-9+.-]*://(?:[^/@]*@)?(\\[[^]]*\\]|[^/:?#]*)'))`;

/** Where the overview's 24 h start, the first whole minute after that, and the first whole hour (UTC, as the counts are kept). */
const START = `(now() - interval '24 hours')`;
const MINUTE1 = `(date_trunc('minute', ${START}, 'UTC') + interval '1 minute')`;
const HOUR1 = `(date_trunc('hour', ${START}, 'UTC') + interval '1 hour')`;

/** The operator console's reads over deliveries and their attempts (the writes stay in DeliveriesRepository). */
@Injectable()
export class DeliveryConsoleRepository {
  constructor(@InjectDataSource() private readonly db: DataSource) {}

  /** One page, newest first, by keyset: the rows after `after` in (created_at, id) descending order. */
  list(f: DeliveryListFilter): Promise<DeliveryListRow[]> {
    return this.db.query(
      `SELECT d.id, d.merchant_id, d.transaction_id, d.event, d.url, d.status, d.attempts, d.next_attempt_at, d.last_http_status,
         (SELECT a.error_class FROM delivery_attempts a WHERE a.delivery_id = d.id ORDER BY a.id DESC LIMIT 1) AS last_error_class,
         d.created_at, d.created_at::text AS cursor
       FROM deliveries d
       WHERE ($1::uuid IS NULL OR d.merchant_id = $1) AND ($2::text IS NULL OR d.status = $2)
         AND ($3::text IS NULL OR ${HOST_OF.replace('url', 'd.url')} = lower($3))
         AND ($4::uuid IS NULL OR d.transaction_id = $4) AND ($5::text IS NULL OR d.event = $5)
         AND ($6::timestamptz IS NULL OR d.created_at >= $6) AND ($7::timestamptz IS NULL OR d.created_at < $7)
         AND ($8::timestamptz IS NULL OR (d.created_at, d.id) < ($8, $9::uuid))
       ORDER BY d.created_at DESC, d.id DESC LIMIT $10`,
      [
        f.merchantId ?? null,
        f.status ?? null,
        f.host ?? null,
        f.transactionId ?? null,
        f.event ?? null,
        f.from ?? null,
        f.to ?? null,
        f.after?.createdAt ?? null,
        f.after?.id ?? null,
        f.limit,
      ],
    );
  }

  /**
   * The overview, from counts the database keeps as deliveries and attempts are written (triggers,
   * migration 1765500000000): per state, per minute, per listener per minute and per hour. The
   * failing listeners' 24 h are the whole hours after the hour the window starts in, the whole
   * minutes of that hour after the window's first minute, and that minute's attempts themselves:
   * the same window, to the microsecond, as counting the attempts of the last 24 h.
   */
  async overview(failingLimit = 10): Promise<DeliveryOverview> {
    const [backlog, oldest, failing, perMinute] = await Promise.all([
      this.db.query<DeliveryOverview['backlog']>(`SELECT status, n::int AS n FROM delivery_state_counts WHERE n <> 0 ORDER BY status`),
      this.db.query<NonNullable<DeliveryOverview['oldestOpen']>[]>(
        `SELECT id, created_at, url, status FROM deliveries WHERE status IN ('pending', 'sending') ORDER BY created_at LIMIT 1`,
      ),
      this.db.query<DeliveryOverview['failingListeners']>(
        `WITH parts AS (
           SELECT merchant_id, host, failed, last_failed_at FROM listener_failure_hours WHERE bucket >= ${HOUR1}
           UNION ALL
           SELECT merchant_id, host, failed, last_failed_at FROM listener_failure_minutes WHERE bucket >= ${MINUTE1} AND bucket < ${HOUR1}
           UNION ALL
           SELECT d.merchant_id, ${HOST_OF.replace('url', 'd.url')}, 1, a.started_at
           FROM delivery_attempts a JOIN deliveries d ON d.id = a.delivery_id
           WHERE a.error_class IS NOT NULL AND a.started_at > ${START} AND a.started_at < ${MINUTE1})
         SELECT merchant_id, host, sum(failed)::int AS failed, max(last_failed_at) AS last_failed_at FROM parts
         GROUP BY 1, 2 ORDER BY failed DESC, last_failed_at DESC LIMIT $1`,
        [failingLimit],
      ),
      this.db.query<DeliveryOverview['perMinute']>(
        `SELECT EXTRACT(EPOCH FROM minute)::bigint::float8 AS minute, succeeded, failed
         FROM delivery_minutes WHERE minute > now() - interval '24 hours' ORDER BY minute`,
      ),
    ]);
    return { backlog, oldestOpen: oldest[0], failingListeners: failing, perMinute };
  }
}
