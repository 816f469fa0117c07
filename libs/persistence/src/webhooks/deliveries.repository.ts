import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { randomUUID } from 'node:crypto';
import { DataSource } from 'typeorm';
import { columns, distinctGroups, inKeyOrder, runDistinctGroups, statementBatcher } from '../batching';

/** 'held': recorded while its listener is disabled, not attempted until the listener is enabled again. */
export const DELIVERY_STATUSES = ['pending', 'sending', 'succeeded', 'failed', 'blocked', 'held'] as const;
export type DeliveryStatus = (typeof DELIVERY_STATUSES)[number];
export type AttemptErrorClass = 'timeout' | 'dns' | 'connect' | 'tls' | 'ssrf_blocked' | 'http_status';

/** Where a walk through overdue deliveries stopped (they are ordered by creation, then id). */
export interface OverdueCursor {
  /** As Postgres prints it: a JavaScript Date would drop the microseconds and never move past a tie. */
  createdAt: string;
  id: string;
}

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

const SUMMARY = `id, merchant_id, transaction_id, status_version, event, url, origin, status, attempts, replays, next_attempt_at,
  last_http_status, last_error, created_at, updated_at, succeeded_at`;

type Created = { row: DeliveryRow; created: boolean };
type NewDeliveryClaim = NewDelivery & { claim: boolean };
type FinishedAttempt = {
  id: string;
  attempt: number;
  a: AttemptRecord;
  next: { status: DeliveryStatus; nextAttemptAt?: Date; error?: string };
};

/**
 * Webhook deliveries and their attempts. A delivery is created once per event × URL (a unique key
 * absorbs re-delivered events) and its body is stored once: every attempt sends the same bytes.
 * Creating deliveries and recording attempts, the two writes of every delivery, are batched
 * across concurrent callers (statementBatcher): one statement for all that arrive together.
 */
@Injectable()
export class DeliveriesRepository {
  private readonly create: (d: NewDeliveryClaim) => Promise<Created>;
  private readonly finish: (f: FinishedAttempt) => Promise<void>;

  constructor(@InjectDataSource() private readonly db: DataSource) {
    this.create = statementBatcher((items) => this.createMany(items));
    this.finish = statementBatcher((items) => this.finishMany(items));
  }

  /**
   * The delivery of this event, created now or by an earlier delivery of the same event. With
   * `claim`, a new delivery is created already claimed for its first attempt ('sending', 1).
   * A new delivery to a disabled listener is created 'held' instead (not claimed, not attempted).
   */
  createOnce(d: NewDelivery, claim = false): Promise<Created> {
    return this.create({ ...d, claim });
  }

  /** Records an attempt and the delivery's new state. */
  finishAttempt(
    id: string,
    attempt: number,
    a: AttemptRecord,
    next: { status: DeliveryStatus; nextAttemptAt?: Date; error?: string },
  ): Promise<void> {
    return this.finish({ id, attempt, a, next });
  }

  /**
   * One statement for many new deliveries. The final SELECT reads the snapshot taken before the
   * insert, so it finds exactly the deliveries that existed already. An event twice in one batch
   * is inserted once; its second caller gets the row as not created (it must not attempt too).
   * A delivery inserted by a concurrent statement after the snapshot is in neither part: that
   * caller fails and its event job runs again, and then finds it.
   */
  private async createMany(items: readonly NewDeliveryClaim[]): Promise<(Created | Error)[]> {
    const key = (d: { transactionId: string; statusVersion: number; event: string }) => `${d.transactionId}|${d.statusVersion}|${d.event}`;
    const [unique] = distinctGroups(items, key);
    const firsts = new Set(unique);
    const rows: (DeliveryRow & { created: boolean })[] = await this.db.query(
      `WITH input AS (
         SELECT * FROM unnest($1::uuid[], $2::uuid[], $3::uuid[], $4::int[], $5::text[], $6::text[], $7::text[], $8::text[], $9::text[], $10::int[])
           AS t (id, merchant_id, transaction_id, status_version, event, url, origin, body, status, attempts)),
       held AS (
         SELECT merchant_id, origin FROM listeners WHERE state = 'disabled' AND (merchant_id, origin) IN (SELECT merchant_id, origin FROM input)),
       created AS (
         INSERT INTO deliveries (id, merchant_id, transaction_id, status_version, event, url, origin, body, status, attempts)
         SELECT i.id, i.merchant_id, i.transaction_id, i.status_version, i.event, i.url, i.origin, i.body,
           CASE WHEN h.origin IS NULL THEN i.status ELSE 'held' END, CASE WHEN h.origin IS NULL THEN i.attempts ELSE 0 END
         FROM input i LEFT JOIN held h USING (merchant_id, origin)
         ON CONFLICT (transaction_id, status_version, event) DO NOTHING RETURNING *)
       SELECT *, true AS created FROM created UNION ALL
       SELECT d.*, false AS created FROM deliveries d JOIN input i USING (transaction_id, status_version, event)`,
      columns(
        unique,
        () => randomUUID(),
        (d) => d.merchantId,
        (d) => d.transactionId,
        (d) => d.statusVersion,
        (d) => d.event,
        (d) => d.url,
        (d) => d.origin,
        (d) => d.body,
        (d) => (d.claim ? 'sending' : 'pending'),
        (d) => (d.claim ? 1 : 0),
      ),
    );
    const byKey = new Map(
      rows.map(({ created, ...row }) => [
        key({ transactionId: row.transaction_id, statusVersion: row.status_version, event: row.event }),
        { row, created },
      ]),
    );
    return items.map((d) => {
      const hit = byKey.get(key(d));
      if (!hit) return new Error(`delivery of ${d.transactionId} v${d.statusVersion} was created concurrently; retry`);
      if (!firsts.has(d)) return { row: hit.row, created: false };
      return hit;
    });
  }

  /**
   * Records many attempts and their deliveries' new states, in one statement. Two attempts of
   * one delivery in a batch (a re-delivered event raced the first) are recorded one after the
   * other, never in one UPDATE, where Postgres would apply an arbitrary one of them.
   */
  private finishMany(items: readonly FinishedAttempt[]): Promise<(void | Error)[]> {
    return runDistinctGroups(
      items,
      (f) => f.id,
      async (group) => {
        await this.finishDistinct(inKeyOrder(group, (f) => f.id));
        return () => undefined;
      },
    );
  }

  private async finishDistinct(items: readonly FinishedAttempt[]): Promise<void> {
    await this.db.query(
      `WITH input AS (
         SELECT * FROM unnest($1::uuid[], $2::int[], $3::timestamptz[], $4::int[], $5::int[], $6::text[], $7::text[], $8::text[], $9::timestamptz[], $10::text[])
           AS t (id, attempt, started_at, duration_ms, http_status, error_class, response_body, status, next_attempt_at, error)),
       attempt AS (
         INSERT INTO delivery_attempts (delivery_id, attempt, started_at, duration_ms, http_status, error_class, response_body)
         SELECT id, attempt, started_at, duration_ms, http_status, error_class, response_body FROM input)
       UPDATE deliveries d SET status = i.status, next_attempt_at = i.next_attempt_at, last_http_status = i.http_status, last_error = i.error, updated_at = now(),
         succeeded_at = CASE WHEN i.status = 'succeeded' THEN now() ELSE d.succeeded_at END
       FROM input i WHERE d.id = i.id`,
      columns(
        items,
        (f) => f.id,
        (f) => f.attempt,
        (f) => f.a.startedAt,
        (f) => f.a.durationMs,
        (f) => f.a.httpStatus ?? null,
        (f) => f.a.errorClass ?? null,
        (f) => f.a.responseBody ?? null,
        (f) => f.next.status,
        (f) => f.next.nextAttemptAt ?? null,
        (f) => f.next.error ?? null,
      ),
    );
  }

  /** The delivery; with `merchantId`, only when it is that merchant's (another's answers undefined, as a missing one). */
  async find(id: string, merchantId?: string): Promise<DeliveryRow | undefined> {
    if (!/^[0-9a-f-]{36}$/i.test(id)) return undefined;
    const rows: DeliveryRow[] = await this.db.query('SELECT * FROM deliveries WHERE id = $1 AND ($2::uuid IS NULL OR merchant_id = $2)', [
      id.toLowerCase(),
      merchantId ?? null,
    ]);
    return rows[0];
  }

  /**
   * Claims an attempt: the delivery with its attempt number counted, or undefined when it is
   * already settled (succeeded, failed or blocked, and not replayed) or held. When its listener
   * is disabled, the delivery is held instead of claimed (returned with status 'held', no attempt
   * counted): a retry never reaches a disabled listener. One round trip.
   */
  async startAttempt(id: string): Promise<DeliveryRow | undefined> {
    if (!/^[0-9a-f-]{36}$/i.test(id)) return undefined;
    const [rows]: [DeliveryRow[], number] = await this.db.query(
      `WITH h AS (
         SELECT EXISTS (SELECT 1 FROM deliveries d JOIN listeners l USING (merchant_id, origin) WHERE d.id = $1 AND l.state = 'disabled') AS held)
       UPDATE deliveries d SET status = CASE WHEN h.held THEN 'held' ELSE 'sending' END,
         attempts = d.attempts + CASE WHEN h.held THEN 0 ELSE 1 END, updated_at = now()
       FROM h WHERE d.id = $1 AND d.status IN ('pending', 'sending') RETURNING d.*`,
      [id.toLowerCase()],
    );
    return rows[0];
  }

  /**
   * Gives back a claim no attempt was made on (the delivery goes to the queue instead): only
   * while it is still that claim (`attempts` as claimed), never one another handler took since.
   * `nextAttemptAt`: when it is due again, when that is known (a throttled delivery).
   */
  async unclaim(id: string, attempts: number, nextAttemptAt?: Date): Promise<void> {
    await this.db.query(
      `UPDATE deliveries SET status = 'pending', attempts = attempts - 1, next_attempt_at = coalesce($3, next_attempt_at), updated_at = now()
       WHERE id = $1 AND status = 'sending' AND attempts = $2`,
      [id, attempts, nextAttemptAt ?? null],
    );
  }

  /** Marks a delivery failed unless an attempt already settled it. */
  async markFailedIfOpen(id: string, error: string): Promise<void> {
    await this.db.query(
      `UPDATE deliveries SET status = 'failed', last_error = $2, updated_at = now() WHERE id = $1 AND status IN ('pending', 'sending')`,
      [id, error.slice(0, 1000)],
    );
  }

  async attemptsOf(id: string): Promise<Record<string, unknown>[]> {
    return this.db.query(
      'SELECT attempt, started_at, duration_ms, http_status, error_class, response_body FROM delivery_attempts WHERE delivery_id = $1 ORDER BY id',
      [id],
    );
  }

  list(filter: { merchantId?: string; status?: DeliveryStatus; limit?: number }): Promise<Omit<DeliveryRow, 'body'>[]> {
    return this.db.query(
      `SELECT ${SUMMARY} FROM deliveries
       WHERE ($1::text IS NULL OR merchant_id::text = lower($1)) AND ($2::text IS NULL OR status = $2)
       ORDER BY created_at DESC, id LIMIT $3`,
      [filter.merchantId ?? null, filter.status ?? null, filter.limit ?? 100],
    );
  }

  /**
   * Makes a delivery that never succeeded pending again, for a replay with a fresh schedule;
   * returns the replay number (for a distinct job id), or undefined when there is nothing to replay.
   */
  async resetForReplay(id: string): Promise<number | undefined> {
    const [rows]: [{ replays: number }[], number] = await this.db.query(
      `UPDATE deliveries SET status = 'pending', replays = replays + 1, next_attempt_at = now(), updated_at = now()
       WHERE id = $1 AND status IN ('failed', 'blocked') RETURNING replays`,
      [id],
    );
    return rows[0]?.replays;
  }

  /**
   * The held deliveries of one listener, oldest first ((created_at, id) order), a page at a time
   * after `after` (the id of the last one released).
   */
  async heldOf(merchantId: string, origin: string, limit: number, after?: string): Promise<Pick<DeliveryRow, 'id' | 'url'>[]> {
    return this.db.query(
      `SELECT id, url FROM deliveries
       WHERE merchant_id = $1 AND origin = $2 AND status = 'held'
         AND ($4::uuid IS NULL OR (created_at, id) > ((SELECT created_at FROM deliveries WHERE id = $4), $4))
       ORDER BY created_at, id LIMIT $3`,
      [merchantId, origin, limit, after ?? null],
    );
  }

  /**
   * Releases a held delivery: pending again with a fresh schedule, as a replay (a retry's job
   * under the delivery's id may still be known to the queue, so it goes under a new one). Returns
   * the replay number, or undefined when it is no longer held.
   */
  async release(id: string): Promise<number | undefined> {
    const [rows]: [{ replays: number }[], number] = await this.db.query(
      `UPDATE deliveries SET status = 'pending', replays = replays + 1, next_attempt_at = now(), updated_at = now()
       WHERE id = $1 AND status = 'held' RETURNING replays`,
      [id],
    );
    return rows[0]?.replays;
  }

  /**
   * Held deliveries whose listener is not disabled (a retry that raced an enable), held for more
   * than `graceS` (an enable releasing them now is left to finish), oldest first, at most `limit`.
   */
  heldStragglers(graceS: number, limit: number): Promise<Pick<DeliveryRow, 'id' | 'url' | 'merchant_id' | 'origin'>[]> {
    return this.db.query(
      `SELECT d.id, d.url, d.merchant_id, d.origin FROM deliveries d
       WHERE d.status = 'held' AND d.updated_at < now() - make_interval(secs => $1)
         AND NOT EXISTS (SELECT 1 FROM listeners l WHERE l.merchant_id = d.merchant_id AND l.origin = d.origin AND l.state = 'disabled')
       ORDER BY d.created_at, d.id LIMIT $2`,
      [graceS, limit],
    );
  }

  /** How many deliveries are held, and the age in seconds of the oldest (0 with none). */
  async heldSummary(): Promise<{ held: number; oldestAgeS: number }> {
    const rows: { held: number; age: number | null }[] = await this.db.query(
      `SELECT count(*)::int AS held, EXTRACT(EPOCH FROM now() - min(created_at))::float8 AS age FROM deliveries WHERE status = 'held'`,
    );
    return { held: rows[0]?.held ?? 0, oldestAgeS: rows[0]?.age ?? 0 };
  }

  /**
   * Deliveries that should be in motion but may have lost their job: pending past their next
   * attempt by `graceS`, or sending for longer than an attempt can take plus `graceS`.
   */
  overdue(
    graceS: number,
    sendingS: number,
    limit: number,
    after?: OverdueCursor,
  ): Promise<(Pick<DeliveryRow, 'id' | 'url' | 'status' | 'attempts' | 'replays'> & OverdueCursor)[]> {
    return this.db.query(
      `SELECT id, url, status, attempts, replays, created_at::text AS "createdAt" FROM deliveries
       WHERE ((status = 'pending' AND next_attempt_at < now() - make_interval(secs => $1))
          OR (status = 'sending' AND updated_at < now() - make_interval(secs => $2)))
         AND ($4::timestamptz IS NULL OR (created_at, id) > ($4, $5::uuid))
       ORDER BY created_at, id LIMIT $3`,
      [graceS, sendingS + graceS, limit, after?.createdAt ?? null, after?.id ?? null],
    );
  }

  /** Seconds since the oldest delivery still waiting to succeed was created (0 when none). */
  async oldestOpenAgeSeconds(): Promise<number> {
    const rows: { age: number | null }[] = await this.db.query(
      `SELECT EXTRACT(EPOCH FROM now() - min(created_at))::float8 AS age FROM deliveries WHERE status IN ('pending', 'sending')`,
    );
    return rows[0]?.age ?? 0;
  }
}
