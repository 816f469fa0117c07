import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { randomUUID } from 'node:crypto';
import { DataSource } from 'typeorm';
import type { DeliveryRow } from './delivery-rows';

export const RECOVERY_STATES = ['running', 'cancelled', 'finished', 'failed'] as const;
export type RecoveryState = (typeof RECOVERY_STATES)[number];
/** What a recovery replays: failed deliveries, and blocked ones (refused by the address guard) when asked. */
export type RecoverableStatus = 'failed' | 'blocked';

/** Which deliveries a recovery replays: one merchant's (one listener's, with `origin`) created since `since`. */
export interface RecoveryScope {
  merchantId: string;
  /** A listener origin (scheme://host:port); undefined: every listener of the merchant. */
  origin?: string;
  since: Date;
  states: readonly RecoverableStatus[];
}

export interface RecoveryRow {
  id: string;
  merchant_id: string;
  origin: string | null;
  since: Date;
  until: Date;
  states: RecoverableStatus[];
  total: number;
  replayed: number;
  skipped: number;
  state: RecoveryState;
  error: string | null;
  created_by: string;
  created_at: Date;
  updated_at: Date;
  finished_at: Date | null;
}

/** A delivery a step made pending again: queued as replay number `replays`. */
export type ReplayedDelivery = Pick<DeliveryRow, 'id' | 'url' | 'replays'>;

/**
 * The deliveries of recovery `r` still to replay: its merchant's (its listener's), created from
 * `since` until it started, failed (or blocked) then and untouched since. A delivery replayed by
 * the recovery (or by anyone) is updated after `until`, so it is never taken twice; one that
 * failed only after the recovery started is not taken either (it was not counted). The literal
 * status list lets Postgres use the deliveries_unsucceeded partial index.
 */
const TO_REPLAY = `d.merchant_id = r.merchant_id AND (r.origin IS NULL OR d.origin = r.origin)
  AND d.status IN ('failed', 'blocked') AND d.status = ANY (r.states)
  AND d.created_at >= r.since AND d.created_at < r.until AND d.updated_at <= r.until`;

/** Recoveries (see the recoveries migration): SQL only; the notifier runs them (runRecovery of @app/webhooks/delivery). */
@Injectable()
export class RecoveriesRepository {
  constructor(@InjectDataSource() private readonly db: DataSource) {}

  /** How many deliveries a recovery of `scope` started now would replay (the console's preview). */
  async count(scope: RecoveryScope): Promise<number> {
    const rows: { n: number }[] = await this.db.query(
      `WITH r AS (SELECT $1::uuid AS merchant_id, $2::text AS origin, $3::timestamptz AS since, $4::text[] AS states, now() AS until)
       SELECT count(*)::int AS n FROM deliveries d, r WHERE ${TO_REPLAY}`,
      [scope.merchantId, scope.origin ?? null, scope.since, scope.states],
    );
    return rows[0].n;
  }

  /** Creates a running recovery, its total counted in the same statement (until = now). */
  async start(scope: RecoveryScope, createdBy: string): Promise<RecoveryRow> {
    const [row]: RecoveryRow[] = await this.db.query(
      `WITH r AS (SELECT $2::uuid AS merchant_id, $3::text AS origin, $4::timestamptz AS since, $5::text[] AS states, now() AS until)
       INSERT INTO recoveries (id, merchant_id, origin, since, states, total, created_by)
       SELECT $1, r.merchant_id, r.origin, r.since, r.states, (SELECT count(*) FROM deliveries d WHERE ${TO_REPLAY}), $6 FROM r
       RETURNING *`,
      [randomUUID(), scope.merchantId, scope.origin ?? null, scope.since, scope.states, createdBy],
    );
    return row;
  }

  async find(id: string): Promise<RecoveryRow | undefined> {
    if (!/^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i.test(id)) return undefined;
    const rows: RecoveryRow[] = await this.db.query('SELECT * FROM recoveries WHERE id = $1', [id.toLowerCase()]);
    return rows[0];
  }

  /** The origins of a merchant's listeners (to find the one a bare host names). */
  async listenerOrigins(merchantId: string): Promise<string[]> {
    const rows: { origin: string }[] = await this.db.query('SELECT origin FROM listeners WHERE merchant_id = $1 ORDER BY origin', [
      merchantId,
    ]);
    return rows.map((r) => r.origin);
  }

  /** The latest recoveries, newest first. */
  recent(limit: number): Promise<RecoveryRow[]> {
    return this.db.query('SELECT * FROM recoveries ORDER BY created_at DESC, id LIMIT $1', [limit]);
  }

  /**
   * Cancels a running recovery; undefined when it is not running. It waits for a page in progress
   * (whose row lock it needs): after it, no further page is replayed.
   */
  async cancel(id: string): Promise<RecoveryRow | undefined> {
    const [rows]: [RecoveryRow[], number] = await this.db.query(
      `UPDATE recoveries SET state = 'cancelled', finished_at = now(), updated_at = now(), skipped = greatest(total - replayed, 0)
       WHERE id = $1 AND state = 'running' RETURNING *`,
      [id],
    );
    return rows[0];
  }

  /** Marks a running recovery failed (its runner gave up), with the reason. */
  async fail(id: string, error: string): Promise<void> {
    await this.db.query(
      `UPDATE recoveries SET state = 'failed', error = $2, finished_at = now(), updated_at = now() WHERE id = $1 AND state = 'running'`,
      [id, error.slice(0, 1000)],
    );
  }

  /** Running recoveries no step has moved for `idleS` seconds (their job may be lost). */
  async idle(idleS: number, limit: number): Promise<string[]> {
    const rows: { id: string }[] = await this.db.query(
      `SELECT id FROM recoveries WHERE state = 'running' AND updated_at < now() - make_interval(secs => $1) ORDER BY updated_at LIMIT $2`,
      [idleS, limit],
    );
    return rows.map((r) => r.id);
  }

  /**
   * One page of a running recovery, in one transaction: the recovery's row is locked (a second
   * step of the same recovery waits here, then goes on from the cursor this one moved), up to
   * `limit` of its deliveries are made pending again (in (created_at, id) order, after the
   * cursor), and the cursor and count move past them. An empty page finishes the recovery. The
   * caller queues the answered deliveries after the commit (a crash in between leaves them
   * pending without a job: the delivery sweeper queues them). Answers the recovery's state after
   * the step and what it replayed (nothing when it is no longer running).
   */
  async step(id: string, limit: number): Promise<{ state: RecoveryState; replayed: ReplayedDelivery[] } | undefined> {
    return this.db.transaction(async (m) => {
      const [r]: { state: RecoveryState }[] = await m.query('SELECT state FROM recoveries WHERE id = $1 FOR UPDATE', [id]);
      if (!r) return undefined;
      if (r.state !== 'running') return { state: r.state, replayed: [] };
      const page: (ReplayedDelivery & { createdAt: string })[] = await m.query(
        `WITH r AS (SELECT * FROM recoveries WHERE id = $1),
         page AS (
           SELECT d.id FROM deliveries d, r
           WHERE ${TO_REPLAY} AND (r.cursor_id IS NULL OR (d.created_at, d.id) > (r.cursor_created_at, r.cursor_id))
           ORDER BY d.created_at, d.id LIMIT $2 FOR UPDATE OF d),
         reset AS (
           UPDATE deliveries d SET status = 'pending', replays = d.replays + 1, next_attempt_at = now(), updated_at = now()
           FROM page WHERE d.id = page.id RETURNING d.id, d.url, d.replays, d.created_at)
         SELECT id, url, replays, created_at::text AS "createdAt" FROM reset ORDER BY created_at, id`,
        [id, limit],
      );
      const last = page[page.length - 1];
      const [[after]]: [{ state: RecoveryState }[], number] = await m.query(
        `UPDATE recoveries SET replayed = replayed + $2, updated_at = now(),
           cursor_created_at = coalesce($3::timestamptz, cursor_created_at), cursor_id = coalesce($4::uuid, cursor_id),
           state = CASE WHEN $2 = 0 THEN 'finished' ELSE state END,
           finished_at = CASE WHEN $2 = 0 THEN now() END,
           skipped = CASE WHEN $2 = 0 THEN greatest(total - replayed, 0) ELSE skipped END
         WHERE id = $1 RETURNING state`,
        [id, page.length, last?.createdAt ?? null, last?.id ?? null],
      );
      return { state: after.state, replayed: page.map(({ id, url, replays }) => ({ id, url, replays })) };
    });
  }
}
