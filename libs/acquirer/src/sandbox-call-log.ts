import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource } from 'typeorm';
import { columns, preparedStatement, statementBatcher } from '@app/persistence';
import type { AcquirerBook, AcquirerResult } from './acquirer.connector';

export interface SandboxCall {
  operationKey: string;
  kind: 'authorize' | 'capture' | 'cancel' | 'reverse';
  /** An authorization that also captured (a sale). */
  capture?: boolean;
  maskedPan?: string;
  amount?: number;
  tid?: string;
  result: AcquirerResult;
  /** An authorization's AuthorizeCommand.initiator. */
  initiator?: 'customer' | 'merchant';
}

/**
 * Where the sandbox records the calls it received. In Postgres, so the record (and with it the
 * idempotency of operation keys) is shared by every tokenizer process and survives a crash.
 */
export interface SandboxCallLog {
  /** Records the call unless its key is known; returns the result that stands for the key. */
  recordOnce(call: SandboxCall): Promise<AcquirerResult>;
  /** Records a call whose key is known as a repeat; returns the first call, or undefined if none. */
  recordRepeat(call: Pick<SandboxCall, 'operationKey' | 'kind' | 'maskedPan' | 'amount'>): Promise<SandboxCall | undefined>;
  find(operationKey: string): Promise<SandboxCall | undefined>;
  findApprovedAuthorization(tid: string): Promise<SandboxCall | undefined>;
  /** The sandbox's books per authorization: what its first calls did (repeats and refusals act on nothing). */
  books(tids: readonly string[]): Promise<Map<string, AcquirerBook>>;
  touchedSince(since: Date): Promise<string[]>;
}

const RECORD_FIRST_CALLS = preparedStatement<{ operation_key: string; result: AcquirerResult }>(
  'sandbox_calls_record_first_initiator',
  `INSERT INTO sandbox_calls (operation_key, kind, masked_pan, amount, tid, result, capture, initiator)
   SELECT * FROM unnest($1::text[], $2::text[], $3::text[], $4::int8[], $5::text[], $6::jsonb[], $7::boolean[], $8::text[])
   ON CONFLICT (operation_key) WHERE NOT repeat DO NOTHING RETURNING operation_key, result`,
);

@Injectable()
export class PostgresSandboxCallLog implements SandboxCallLog {
  /** Concurrent first calls are recorded in one statement (see statementBatcher). */
  private readonly recordFirst: (call: SandboxCall) => Promise<AcquirerResult>;

  constructor(@InjectDataSource() private readonly db: DataSource) {
    this.recordFirst = statementBatcher((calls) => this.recordMany(calls));
  }

  recordOnce(call: SandboxCall): Promise<AcquirerResult> {
    return this.recordFirst(call);
  }

  /**
   * Records each call unless its key is known. A key already known (or twice in the batch: its
   * first call is the one recorded) makes the call a repeat, answered with the first result.
   */
  private async recordMany(calls: readonly SandboxCall[]): Promise<(AcquirerResult | Error)[]> {
    const inserted = await RECORD_FIRST_CALLS(
      this.db,
      columns(
        calls,
        (c) => c.operationKey,
        (c) => c.kind,
        (c) => c.maskedPan ?? null,
        (c) => c.amount ?? null,
        (c) => c.tid ?? c.result.tid ?? null,
        (c) => JSON.stringify(c.result),
        (c) => c.capture ?? false,
        (c) => c.initiator ?? null,
      ),
    );
    const first = new Map(inserted.map((r) => [r.operation_key, r.result]));
    const answered = new Set<string>();
    const out: (AcquirerResult | Error)[] = [];
    for (const call of calls) {
      const result = first.get(call.operationKey);
      if (result !== undefined && !answered.has(call.operationKey)) {
        answered.add(call.operationKey);
        out.push(result);
      } else {
        // Another delivery of the same operation got there first: its result is the answer. The
        // insert has committed: a failure here is this call's alone (it is retried with its key).
        out.push(
          await this.recordRepeat(call).then(
            (first) => first!.result,
            (e: Error) => e,
          ),
        );
      }
    }
    return out;
  }

  /** A call whose operation key is known: recorded as received, answered from the first one. */
  async recordRepeat(call: Pick<SandboxCall, 'operationKey' | 'kind' | 'maskedPan' | 'amount'>): Promise<SandboxCall | undefined> {
    const first = await this.find(call.operationKey);
    if (first) {
      await this.db.query(
        'INSERT INTO sandbox_calls (operation_key, kind, repeat, masked_pan, amount, tid, result) VALUES ($1, $2, true, $3, $4, $5, $6)',
        [call.operationKey, call.kind, call.maskedPan ?? null, call.amount ?? null, first.tid ?? null, JSON.stringify(first.result)],
      );
    }
    return first;
  }

  async find(operationKey: string): Promise<SandboxCall | undefined> {
    const rows: {
      operation_key: string;
      kind: SandboxCall['kind'];
      masked_pan: string | null;
      amount: string | null;
      tid: string | null;
      result: AcquirerResult;
    }[] = await this.db.query(
      'SELECT operation_key, kind, masked_pan, amount, tid, result FROM sandbox_calls WHERE operation_key = $1 AND NOT repeat',
      [operationKey],
    );
    const r = rows[0];
    return (
      r && {
        operationKey: r.operation_key,
        kind: r.kind,
        maskedPan: r.masked_pan ?? undefined,
        amount: r.amount === null ? undefined : Number(r.amount),
        tid: r.tid ?? undefined,
        result: r.result,
      }
    );
  }

  async books(tids: readonly string[]): Promise<Map<string, AcquirerBook>> {
    const rows: { tid: string; approved: boolean; captured: string; cancelled: string }[] = await this.db.query(
      `SELECT tid,
         bool_or(kind = 'authorize' AND approved) AND NOT bool_or(kind = 'reverse') AS approved,
         CASE WHEN bool_or(kind = 'reverse') THEN 0
              ELSE COALESCE(SUM(amount) FILTER (WHERE approved AND (kind = 'capture' OR (kind = 'authorize' AND capture))), 0) END AS captured,
         COALESCE(SUM(amount) FILTER (WHERE approved AND kind = 'cancel'), 0) AS cancelled
       FROM (SELECT tid, kind, capture, amount, result->>'outcome' = 'approved' AS approved FROM sandbox_calls WHERE NOT repeat AND tid = ANY($1)) c
       GROUP BY tid`,
      [tids],
    );
    return new Map(
      rows.map((r) => [r.tid, { tid: r.tid, approved: r.approved, captured: Number(r.captured), cancelled: Number(r.cancelled) }]),
    );
  }

  async touchedSince(since: Date): Promise<string[]> {
    const rows: { tid: string }[] = await this.db.query(
      `SELECT DISTINCT tid FROM sandbox_calls WHERE created_at >= $1 AND tid IS NOT NULL AND tid <> ''`,
      [since],
    );
    return rows.map((r) => r.tid);
  }

  async findApprovedAuthorization(tid: string): Promise<SandboxCall | undefined> {
    const rows: { operation_key: string }[] = await this.db.query(
      `SELECT operation_key FROM sandbox_calls WHERE kind = 'authorize' AND NOT repeat AND tid = $1 AND result->>'outcome' = 'approved'`,
      [tid],
    );
    return rows[0] ? this.find(rows[0].operation_key) : undefined;
  }
}
