import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource } from 'typeorm';
import { columns, inKeyOrder } from '../batching';

/** A listener origin's host name (scheme://host:port), lower-cased, as the deliveries list extracts it from a URL. */
const HOST = `lower(substring(l.origin from '^https?://(.*):[0-9]+$'))`;

export type ListenerState = 'enabled' | 'disabled';

export interface ListenerRow {
  merchant_id: string;
  origin: string;
  state: ListenerState;
  disabled_at: Date | null;
  /** 'auto' (LISTENER_DISABLE_AFTER) or the id of the operator who disabled it. */
  disabled_by: string | null;
  failing_since: Date | null;
  last_success_at: Date | null;
  last_failure_at: Date | null;
  consecutive_failures: number;
  created_at: Date;
  updated_at: Date;
}

/**
 * What a batch of attempts changed for one listener (`HealthDelta` of `@app/webhooks`, folded by
 * the notifier), applied in SQL as the pure `applyDelta` does.
 */
export interface ListenerDelta {
  merchantId: string;
  origin: string;
  /** The latest success of the batch, if any. */
  lastSuccessAt?: Date;
  /** The first failure after that success (with no success, the first failure). */
  firstFailureAfterSuccess?: Date;
  /** Failures after that success (with no success, every failure). */
  failuresAfterSuccess: number;
  lastFailureAt?: Date;
}

/** A listener found failing for the whole disable period by the last write (not yet disabled). */
export interface DueListener {
  merchantId: string;
  origin: string;
  failingSince: Date;
  consecutiveFailures: number;
}

/**
 * Where a page of the console's listener list stopped. The list is worst first: disabled before
 * enabled (rank 0, 1), then most consecutive failures, then merchant and origin; the cursor is
 * that whole sort key, so a page goes on exactly after the last row of the one before.
 */
export interface ListenerPageCursor {
  rank: number;
  failures: number;
  merchantId: string;
  origin: string;
}

export interface ListenerPageFilter {
  merchantId?: string;
  state?: ListenerState;
  /** The listener's host name (compared lower-cased), as the deliveries list filters it. */
  host?: string;
  after?: ListenerPageCursor;
  limit: number;
}

export interface ListenerPageRow extends ListenerRow {
  /** The name of the operator who disabled it (null when 'auto' or enabled). */
  disabled_by_name: string | null;
  held: number;
  /** The listener's host name, as the deliveries list filters it. */
  host: string;
  rank: number;
}

/** Attempts to one listener over the last 1 h and 24 h, and how many of them succeeded (2xx). */
export interface ListenerAttemptRates {
  merchant_id: string;
  origin: string;
  attempts_1h: number;
  ok_1h: number;
  attempts_24h: number;
  ok_24h: number;
}

/** Listener health: one row per merchant × origin (see the listeners migration). */
@Injectable()
export class ListenersRepository {
  constructor(@InjectDataSource() private readonly db: DataSource) {}

  /**
   * Applies the deltas of a batch of attempts, one per listener, in one upsert (in key order: two
   * batches never deadlock on the same rows). Answers the listeners now due for disabling
   * (enabled, failing with no success for `disableAfterMs`); it does not disable them.
   */
  async record(deltas: readonly ListenerDelta[], disableAfterMs: number): Promise<DueListener[]> {
    if (!deltas.length) return [];
    return this.db.query(
      `WITH input AS (
         SELECT * FROM unnest($1::uuid[], $2::text[], $3::timestamptz[], $4::timestamptz[], $5::int[], $6::timestamptz[])
           AS t (merchant_id, origin, success_at, first_failure_at, failures, last_failure_at)),
       written AS (
         INSERT INTO listeners AS l (merchant_id, origin, failing_since, last_success_at, last_failure_at, consecutive_failures)
         SELECT merchant_id, origin, first_failure_at, success_at, last_failure_at, failures FROM input
         ON CONFLICT (merchant_id, origin) DO UPDATE SET
           failing_since = CASE WHEN excluded.last_success_at IS NOT NULL THEN excluded.failing_since
                                ELSE coalesce(l.failing_since, excluded.failing_since) END,
           last_success_at = greatest(l.last_success_at, excluded.last_success_at),
           last_failure_at = greatest(l.last_failure_at, excluded.last_failure_at),
           consecutive_failures = CASE WHEN excluded.last_success_at IS NOT NULL THEN excluded.consecutive_failures
                                       ELSE l.consecutive_failures + excluded.consecutive_failures END,
           updated_at = now()
         RETURNING l.*)
       SELECT merchant_id AS "merchantId", origin, failing_since AS "failingSince", consecutive_failures AS "consecutiveFailures"
       FROM written WHERE state = 'enabled' AND failing_since <= now() - make_interval(secs => $7)`,
      [
        ...columns(
          inKeyOrder(deltas, (d) => `${d.merchantId}|${d.origin}`),
          (d) => d.merchantId,
          (d) => d.origin,
          (d) => d.lastSuccessAt ?? null,
          (d) => d.firstFailureAfterSuccess ?? null,
          (d) => d.failuresAfterSuccess,
          (d) => d.lastFailureAt ?? null,
        ),
        disableAfterMs / 1000,
      ],
    );
  }

  /**
   * Disables a listener that is still due (enabled, failing for `disableAfterMs`): false when a
   * success came in meanwhile, an operator acted, or another notifier disabled it first.
   */
  async autoDisable(merchantId: string, origin: string, disableAfterMs: number): Promise<boolean> {
    const [rows]: [unknown[], number] = await this.db.query(
      `UPDATE listeners SET state = 'disabled', disabled_at = now(), disabled_by = 'auto', updated_at = now()
       WHERE merchant_id = $1 AND origin = $2 AND state = 'enabled' AND failing_since <= now() - make_interval(secs => $3)
       RETURNING 1`,
      [merchantId, origin, disableAfterMs / 1000],
    );
    return rows.length === 1;
  }

  /** An operator disables a listener (one never delivered to as well): false when it already is. */
  async disable(merchantId: string, origin: string, operatorId: string): Promise<boolean> {
    const rows: unknown[] = await this.db.query(
      `INSERT INTO listeners AS l (merchant_id, origin, state, disabled_at, disabled_by) VALUES ($1, $2, 'disabled', now(), $3)
       ON CONFLICT (merchant_id, origin) DO UPDATE SET state = 'disabled', disabled_at = now(), disabled_by = $3, updated_at = now()
       WHERE l.state = 'enabled'
       RETURNING 1`,
      [merchantId, origin, operatorId],
    );
    return rows.length === 1;
  }

  /**
   * Enables a disabled listener, its failing period started over (its next failure does not
   * disable it again at once): false when it is not disabled.
   */
  async enable(merchantId: string, origin: string): Promise<boolean> {
    const rows: unknown[] = await this.db.query(
      // Its held deliveries are touched in the same statement: the sweeper releases held deliveries
      // of an enabled listener only once they have sat a grace period since, which leaves them to
      // this enable's release, in order, rather than to a race between the two.
      `WITH enabled AS (
         UPDATE listeners SET state = 'enabled', disabled_at = NULL, disabled_by = NULL, failing_since = NULL, consecutive_failures = 0, updated_at = now()
         WHERE merchant_id = $1 AND origin = $2 AND state = 'disabled' RETURNING 1),
       touched AS (
         UPDATE deliveries SET updated_at = now()
         WHERE merchant_id = $1 AND origin = $2 AND status = 'held' AND EXISTS (SELECT 1 FROM enabled))
       SELECT 1 FROM enabled`,
      [merchantId, origin],
    );
    return rows.length === 1;
  }

  /** A merchant's listeners, each with how many of its deliveries are held. */
  list(merchantId: string, state?: ListenerState): Promise<(ListenerRow & { held: number })[]> {
    return this.db.query(
      `SELECT l.*, (SELECT count(*) FROM deliveries d WHERE d.merchant_id = l.merchant_id AND d.origin = l.origin AND d.status = 'held')::int AS held
       FROM listeners l WHERE l.merchant_id = $1 AND ($2::text IS NULL OR l.state = $2) ORDER BY l.origin`,
      [merchantId, state ?? null],
    );
  }

  /** How many deliveries of this listener are held. */
  async heldCount(merchantId: string, origin: string): Promise<number> {
    const rows: { n: number }[] = await this.db.query(
      `SELECT count(*)::int AS n FROM deliveries WHERE merchant_id = $1 AND origin = $2 AND status = 'held'`,
      [merchantId, origin],
    );
    return rows[0].n;
  }

  /**
   * One page of every merchant's listeners, worst first, by keyset (see ListenerPageCursor); with
   * each, its held deliveries (counted on the deliveries_held index) and who disabled it. The
   * listeners table has one row per merchant × origin, so sorting it is cheap; the deliveries are
   * counted only for the rows of the page.
   */
  page(f: ListenerPageFilter): Promise<ListenerPageRow[]> {
    return this.db.query(
      `SELECT l.*, o.name AS disabled_by_name, ${HOST} AS host, (l.state = 'enabled')::int AS rank,
         (SELECT count(*) FROM deliveries d WHERE d.merchant_id = l.merchant_id AND d.origin = l.origin AND d.status = 'held')::int AS held
       FROM listeners l LEFT JOIN operators o ON o.id::text = l.disabled_by
       WHERE ($1::uuid IS NULL OR l.merchant_id = $1) AND ($2::text IS NULL OR l.state = $2) AND ($3::text IS NULL OR ${HOST} = lower($3))
         AND ($4::int IS NULL OR ((l.state = 'enabled')::int, -l.consecutive_failures, l.merchant_id, l.origin) > ($4, -$5::int, $6::uuid, $7::text))
       ORDER BY (l.state = 'enabled')::int, -l.consecutive_failures, l.merchant_id, l.origin LIMIT $8`,
      [
        f.merchantId ?? null,
        f.state ?? null,
        f.host ?? null,
        f.after?.rank ?? null,
        f.after?.failures ?? null,
        f.after?.merchantId ?? null,
        f.after?.origin ?? null,
        f.limit,
      ],
    );
  }

  /**
   * Attempts over the last 1 h and 24 h for the given listeners only (a page of the console),
   * bounded by the attempts' start time: the listeners with no attempt in 24 h are absent.
   */
  attemptRates(keys: readonly { merchant_id: string; origin: string }[]): Promise<ListenerAttemptRates[]> {
    if (!keys.length) return Promise.resolve([]);
    return this.db.query(
      `SELECT d.merchant_id, d.origin,
         count(*) FILTER (WHERE a.started_at > now() - interval '1 hour')::int AS attempts_1h,
         count(*) FILTER (WHERE a.started_at > now() - interval '1 hour' AND a.error_class IS NULL)::int AS ok_1h,
         count(*)::int AS attempts_24h,
         count(*) FILTER (WHERE a.error_class IS NULL)::int AS ok_24h
       FROM unnest($1::uuid[], $2::text[]) AS p (merchant_id, origin)
       JOIN deliveries d ON d.merchant_id = p.merchant_id AND d.origin = p.origin
       JOIN delivery_attempts a ON a.delivery_id = d.id
       WHERE a.started_at > now() - interval '24 hours'
       GROUP BY d.merchant_id, d.origin`,
      columns(
        keys,
        (k) => k.merchant_id,
        (k) => k.origin,
      ),
    );
  }

  async find(merchantId: string, origin: string): Promise<ListenerRow | undefined> {
    const rows: ListenerRow[] = await this.db.query(`SELECT * FROM listeners WHERE merchant_id = $1 AND origin = $2`, [merchantId, origin]);
    return rows[0];
  }
}
