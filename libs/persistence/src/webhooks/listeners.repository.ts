import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource } from 'typeorm';
import { columns, inKeyOrder } from '../batching';

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
    const [rows]: [unknown[], number] = await this.db.query(
      `UPDATE listeners SET state = 'enabled', disabled_at = NULL, disabled_by = NULL, failing_since = NULL, consecutive_failures = 0, updated_at = now()
       WHERE merchant_id = $1 AND origin = $2 AND state = 'disabled' RETURNING 1`,
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

  async find(merchantId: string, origin: string): Promise<ListenerRow | undefined> {
    const rows: ListenerRow[] = await this.db.query(`SELECT * FROM listeners WHERE merchant_id = $1 AND origin = $2`, [merchantId, origin]);
    return rows[0];
  }
}
