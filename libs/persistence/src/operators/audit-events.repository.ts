import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource } from 'typeorm';

/** What the audit_events.outcome column holds (its CHECK); when each is written is libs/operators' AuditTrail. */
export type AuditOutcome = 'attempted' | 'ok' | 'refused' | 'failed';

/** One audit_events row as written, already masked and cut by the trail's rules. */
export interface AuditEventInsert {
  operatorId: string | null;
  operatorName: string | null;
  action: string;
  target: string | null;
  origin: string;
  outcome: AuditOutcome;
  errorClass: string | null;
  attemptId: string | null;
  detail: Record<string, unknown>;
}

export interface AuditEventRow {
  id: string;
  at: Date;
  operator_id: string | null;
  operator_name: string | null;
  action: string;
  target: string | null;
  origin: string;
  outcome: AuditOutcome;
  error_class: string | null;
  attempt_id: string | null;
  detail: Record<string, unknown>;
}

export interface AuditFilter {
  since?: Date;
  operator?: string;
  action?: string;
  limit: number;
}

/** The statements of the append-only audit_events table (a trigger refuses UPDATE, DELETE and TRUNCATE). */
@Injectable()
export class AuditEventsRepository {
  constructor(@InjectDataSource() private readonly db: DataSource) {}

  /** Appends one event; resolves with its id. */
  async insert(e: AuditEventInsert): Promise<string> {
    const [{ id }]: { id: string }[] = await this.db.query(
      `INSERT INTO audit_events (operator_id, operator_name, action, target, origin, outcome, error_class, attempt_id, detail)
       VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9) RETURNING id`,
      [e.operatorId, e.operatorName, e.action, e.target, e.origin, e.outcome, e.errorClass, e.attemptId, e.detail],
    );
    return String(id);
  }

  async list(f: AuditFilter): Promise<AuditEventRow[]> {
    const rows: AuditEventRow[] = await this.db.query(
      `SELECT id, at, operator_id, operator_name, action, target, origin, outcome, error_class, attempt_id, detail FROM audit_events
       WHERE ($1::timestamptz IS NULL OR at >= $1) AND ($2::text IS NULL OR operator_name = $2) AND ($3::text IS NULL OR action = $3)
       ORDER BY at DESC, id DESC LIMIT $4`,
      [f.since ?? null, f.operator ?? null, f.action ?? null, f.limit],
    );
    return rows.map((r) => ({ ...r, id: String(r.id), attempt_id: r.attempt_id === null ? null : String(r.attempt_id) }));
  }
}
