import { Injectable, Logger } from '@nestjs/common';
import { DueListener, ListenerDelta, ListenersRepository, MerchantsRepository, statementBatcher } from '@app/persistence';
import { AuditTrail, RefusedError } from '@app/operators';
import { safeErrorText } from '@app/platform';
import { foldVerdicts } from '@app/webhooks';
import { NotifierConfig } from '../config/notifier.config';

interface Verdict {
  merchantId: string;
  origin: string;
  ok: boolean;
  at: Date;
}

/** The audit action of a disable, by an operator (listener:disable) or, here, automatically. */
export const LISTENER_DISABLE_ACTION = 'listener:disable';

/**
 * Keeps each listener's health from the attempts' results (issue 16, item 2). Verdicts of
 * concurrent attempts are batched like the attempt writes (statementBatcher): folded per listener
 * (foldVerdicts) and written in one statement. A listener that write finds failing with no
 * success for LISTENER_DISABLE_AFTER is disabled here, between an attempt and an outcome in the
 * audit trail (actor `system:notifier`); from then on its deliveries are held, not attempted.
 *
 * One write at a time (maxInFlight 1): every write of a listener updates its one row, so a second
 * statement would only wait for the first's row lock, holding a pooled connection meanwhile; and
 * one at a time, the writes apply the verdicts in the order they were noted. Verdicts noted
 * while a write is out go together in the next, so under load a write serves hundreds.
 */
@Injectable()
export class ListenerHealthRecorder {
  private readonly logger = new Logger(ListenerHealthRecorder.name);
  private readonly write: (v: Verdict) => Promise<void>;
  /** Writes of verdicts nobody waits on (successes), until they are done: flush() waits for them. */
  private readonly unawaited = new Set<Promise<void>>();

  constructor(
    private readonly listeners: ListenersRepository,
    private readonly merchants: MerchantsRepository,
    private readonly audit: AuditTrail,
    private readonly config: NotifierConfig,
  ) {
    this.write = statementBatcher(
      async (items) => {
        await this.writeMany(items);
        return items.map(() => undefined);
      },
      { maxInFlight: 1 },
    );
  }

  /**
   * Records an attempt's verdict on its listener: `ok` when it answered 2xx. Never throws: the
   * attempt is recorded already, and its schedule must not depend on this bookkeeping.
   *
   * A failure resolves once it is written and any disable it made due is done, so the attempt's
   * retry is scheduled after that (and is held, not attempted). A success resolves at once: it
   * can only end a failing period, never disable, so the hot path of a healthy listener does not
   * wait for this write (its write still goes out, in order; flush() waits for it on shutdown).
   */
  note(delivery: { merchant_id: string; origin: string | null }, ok: boolean, at: Date): Promise<void> {
    if (!delivery.origin) return Promise.resolve(); // created before listeners were tracked
    const origin = delivery.origin;
    const written = this.write({ merchantId: delivery.merchant_id, origin, ok, at }).catch((e) =>
      this.logger.warn(`listener health of ${origin}: ${safeErrorText(e)}`),
    );
    if (!ok) return written;
    this.unawaited.add(written);
    void written.finally(() => this.unawaited.delete(written));
    return Promise.resolve();
  }

  /** Waits for the verdicts noted so far to be written (on shutdown, before the pool closes). */
  async flush(): Promise<void> {
    while (this.unawaited.size) await Promise.all([...this.unawaited]);
  }

  private async writeMany(items: readonly Verdict[]): Promise<void> {
    const byListener = new Map<string, Verdict[]>();
    for (const v of items) {
      const key = `${v.merchantId}|${v.origin}`;
      const verdicts = byListener.get(key);
      if (verdicts) verdicts.push(v);
      else byListener.set(key, [v]);
    }
    const deltas: ListenerDelta[] = [...byListener.values()].map((verdicts) => {
      const failures = verdicts.filter((v) => !v.ok).map((v) => v.at.getTime());
      return {
        merchantId: verdicts[0].merchantId,
        origin: verdicts[0].origin,
        ...foldVerdicts(verdicts),
        lastFailureAt: failures.length ? new Date(Math.max(...failures)) : undefined,
      };
    });
    const due = await this.listeners.record(deltas, this.config.listenerDisableAfterMs);
    for (const listener of due) await this.disable(listener);
  }

  private async disable(l: DueListener): Promise<void> {
    const disableAfterMs = this.config.listenerDisableAfterMs;
    try {
      await this.audit.run(
        {
          system: 'notifier',
          action: LISTENER_DISABLE_ACTION,
          target: (await this.merchants.publicIdOf(l.merchantId)) ?? l.merchantId,
          origin: 'notifier LISTENER_DISABLE_AFTER',
          detail: {
            origin: l.origin,
            by: 'auto',
            failingSince: l.failingSince.toISOString(),
            consecutiveFailures: l.consecutiveFailures,
            disableAfterS: disableAfterMs / 1000,
          },
        },
        async () => {
          // Another notifier may have disabled it first, or a success came in: nothing to do then.
          if (!(await this.listeners.autoDisable(l.merchantId, l.origin, disableAfterMs)))
            throw new RefusedError('no longer due (disabled already, or it succeeded meanwhile)');
        },
      );
      this.logger.warn(
        { merchantId: l.merchantId, origin: l.origin, failingSince: l.failingSince },
        'listener failing with no success for LISTENER_DISABLE_AFTER: disabled; its deliveries are held until it is enabled',
      );
    } catch (e) {
      if (!(e instanceof RefusedError)) this.logger.warn(`disabling listener ${l.origin}: ${safeErrorText(e)}`);
    }
  }
}
