import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource } from 'typeorm';
import { statementBatcher } from '../batching';
import {
  AttemptRecord,
  Created,
  DeliveryRow,
  DeliveryStatus,
  FinishedAttempt,
  NewDelivery,
  NewDeliveryClaim,
  OverdueCursor,
  DeliveryCursor,
  PublishedStatusChange,
} from './delivery-rows';
import { PUBLISHED_AT_TEXT, type PublishedCursor } from '@app/platform';
import { createDeliveries, recordAttempts } from './delivery-writes';

const SUMMARY = `id, merchant_id, transaction_id, status_version, event, url, origin, status, attempts, replays, next_attempt_at,
  last_http_status, last_error, created_at, updated_at, succeeded_at`;

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
    this.create = statementBatcher((items) => createDeliveries(this.db, items));
    this.finish = statementBatcher((items) => recordAttempts(this.db, items));
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
   * The status changes the outbox published after `after` and by `upTo`, oldest first, at most
   * `limit`: each with its event's payload while no delivery exists for it (null once one does).
   * What the notifier's event sweep reads, to deliver the changes whose events were lost.
   */
  publishedStatusChanges(after: PublishedCursor, upTo: Date, limit: number): Promise<PublishedStatusChange[]> {
    return this.db.query(
      // statusVersion compared as text: a malformed payload is a row to repair (and give up on), not a failed query.
      `SELECT o.id, ${PUBLISHED_AT_TEXT} AS "publishedAt",
         CASE WHEN EXISTS (SELECT 1 FROM deliveries d WHERE d.transaction_id = o.aggregate_id
             AND d.status_version::text = o.payload->>'statusVersion' AND d.event = o.event)
           THEN NULL ELSE o.payload END AS payload
       FROM outbox o
       WHERE o.event = 'transaction.status_changed' AND o.published_at IS NOT NULL
         AND (o.published_at, o.id) > ($1::timestamptz, $2::uuid) AND o.published_at <= $3
       ORDER BY o.published_at, o.id LIMIT $4`,
      [after.publishedAt, after.id, upTo, limit],
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
      'SELECT attempt, started_at, duration_ms, http_status, error_class, response_body, trace_id FROM delivery_attempts WHERE delivery_id = $1 ORDER BY id',
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
   * Releases the oldest page of one listener's held deliveries in one statement: pending again
   * with a fresh schedule, as replays (a retry's job under a delivery's id may still be known to
   * the queue, so each goes under a new one). Returned oldest first ((created_at, id) order), with
   * the replay numbers; empty when nothing is held after `after` (the last one of the page before:
   * a delivery held again while its release runs, its listener disabled meanwhile, is not released
   * twice by one enable). One statement per page leaves no moment in which the sweeper could take
   * part of a page and queue it out of order.
   */
  async releaseHeldPage(
    merchantId: string,
    origin: string,
    limit: number,
    after?: DeliveryCursor,
  ): Promise<(Pick<DeliveryRow, 'id' | 'url'> & { replays: number } & DeliveryCursor)[]> {
    const [rows]: [(Pick<DeliveryRow, 'id' | 'url'> & { replays: number } & DeliveryCursor)[], number] = await this.db.query(
      `WITH page AS (
         SELECT id FROM deliveries WHERE merchant_id = $1 AND origin = $2 AND status = 'held'
           AND ($4::timestamptz IS NULL OR (created_at, id) > ($4, $5::uuid))
         ORDER BY created_at, id LIMIT $3 FOR UPDATE)
       UPDATE deliveries d SET status = 'pending', replays = d.replays + 1, next_attempt_at = now(), updated_at = now()
       FROM page WHERE d.id = page.id AND d.status = 'held'
       RETURNING d.id, d.url, d.replays, d.created_at::text AS "createdAt"`,
      [merchantId, origin, limit, after?.createdAt ?? null, after?.id ?? null],
    );
    // RETURNING keeps no order: (created_at, id) is the order the notifier created them in.
    const byAge = (a: (typeof rows)[number], b: (typeof rows)[number]) =>
      a.createdAt === b.createdAt ? (a.id < b.id ? -1 : 1) : a.createdAt < b.createdAt ? -1 : 1;
    return rows.sort(byAge);
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
