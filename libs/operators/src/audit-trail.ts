import { Injectable } from '@nestjs/common';
import { AuditEventRow, AuditEventsRepository, AuditFilter, AuditOutcome } from '@app/persistence';
import { auditDetail, maskCardLike } from './operator-access';

/** Who did what to which target from where: the part of an event the attempt and its outcome share. */
export interface AuditSubject {
  /** Undefined: nobody authenticated (an unknown token, or the first admin's bootstrap). */
  operator?: { id: string; name: string };
  /**
   * An automatic action's actor, when no operator acted (the notifier disabling a failing
   * listener): recorded with no operator id and the name `system:<actor>`, which no operator can
   * hold (operator names have no ':'), so `audit:list --operator system:notifier` finds them.
   */
  system?: string;
  /**
   * A merchant portal link's id, when the merchant holding that link acted (a replay from the
   * portal): recorded with no operator id and the name `portal:<link id>` (no operator name has a
   * ':'), so `audit:list --operator portal:<link id>` finds what that link did.
   */
  portalLink?: string;
  action: string;
  target?: string;
  /** `cli <os user>@<host>`, or `http <client address>`. */
  origin: string;
  detail?: Record<string, unknown>;
}

/** Thrown by an action that decided not to act (the event's outcome is then `refused`, not `failed`). */
export class RefusedError extends Error {
  override name = 'RefusedError';
}

/** The audit trail wrote nothing: the action it guards did not run, or its outcome is unrecorded. */
export class AuditUnavailableError extends Error {
  override name = 'AuditUnavailableError';
}

/**
 * The append-only audit trail (a trigger refuses UPDATE, DELETE and TRUNCATE).
 *
 * An action is never done unrecorded: `run` appends the attempt first and acts only once that
 * row is written; then it appends the outcome (ok, refused or failed with the error's class)
 * pointing at the attempt. If the attempt cannot be written the action does not run; if the
 * outcome cannot be written the caller fails too, and the attempt without an outcome says so.
 */
@Injectable()
export class AuditTrail {
  constructor(private readonly events: AuditEventsRepository) {}

  async append(s: AuditSubject, outcome: AuditOutcome, extra: { errorClass?: string; attemptId?: string } = {}): Promise<string> {
    try {
      return await this.events.insert({
        operatorId: s.operator?.id ?? null,
        operatorName: s.operator?.name ?? (s.system ? `system:${s.system}` : s.portalLink ? `portal:${s.portalLink}` : null),
        action: s.action,
        target: s.target === undefined ? null : maskCardLike(s.target).slice(0, 200),
        origin: s.origin,
        outcome,
        errorClass: extra.errorClass ?? null,
        attemptId: extra.attemptId ?? null,
        detail: auditDetail(s.detail ?? {}),
      });
    } catch (e) {
      throw new AuditUnavailableError(`the audit trail could not record ${s.action} (${outcome}): ${(e as Error).message}`);
    }
  }

  /** Records a refusal: nothing was attempted. */
  async refuse(s: AuditSubject, reason: string): Promise<void> {
    await this.append({ ...s, detail: { ...s.detail, reason } }, 'refused');
  }

  /** Runs `act` between its attempt and its outcome (see the class comment). */
  async run<T>(s: AuditSubject, act: () => Promise<T>, late?: () => Partial<AuditSubject>): Promise<T> {
    const attemptId = await this.append(s, 'attempted');
    let result: T;
    try {
      result = await act();
    } catch (e) {
      const refused = e instanceof RefusedError;
      const outcome: AuditOutcome = refused ? 'refused' : 'failed';
      try {
        const ended = { ...s, ...late?.() };
        if (refused) ended.detail = { ...ended.detail, reason: e.message };
        await this.append(ended, outcome, { errorClass: refused ? undefined : errorClassOf(e), attemptId });
      } catch (auditError) {
        throw new AuditUnavailableError(`${(e as Error).message}; and ${(auditError as Error).message}`);
      }
      throw e;
    }
    await this.append({ ...s, ...late?.() }, 'ok', { attemptId });
    return result;
  }

  list(f: AuditFilter): Promise<AuditEventRow[]> {
    return this.events.list(f);
  }
}

/** A failure's class for the trail: its name (CliError, DomainError, QueryFailedError…), never its message. */
export function errorClassOf(e: unknown): string {
  const name = e instanceof Error ? (e.name !== 'Error' ? e.name : e.constructor.name) : typeof e;
  return /^[A-Za-z0-9_.:-]{1,64}$/.test(name) ? name : 'Error';
}
