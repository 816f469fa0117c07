import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource } from 'typeorm';
import type { AcquirerResult } from './acquirer.connector';

export interface SandboxCall {
  operationKey: string;
  kind: 'authorize' | 'capture' | 'cancel' | 'reverse';
  maskedPan?: string;
  amount?: number;
  tid?: string;
  result: AcquirerResult;
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
}

@Injectable()
export class PostgresSandboxCallLog implements SandboxCallLog {
  constructor(@InjectDataSource() private readonly db: DataSource) {}

  async recordOnce(call: SandboxCall): Promise<AcquirerResult> {
    const params = [call.operationKey, call.kind, call.maskedPan ?? null, call.amount ?? null, call.tid ?? call.result.tid, JSON.stringify(call.result)];
    const inserted: { result: AcquirerResult }[] = await this.db.query(
      `INSERT INTO sandbox_calls (operation_key, kind, masked_pan, amount, tid, result) VALUES ($1, $2, $3, $4, $5, $6)
       ON CONFLICT (operation_key) WHERE NOT repeat DO NOTHING RETURNING result`,
      params,
    );
    if (inserted.length) return inserted[0].result;
    // Another delivery of the same operation got there first: its result is the answer.
    return (await this.recordRepeat(call))!.result;
  }

  /** A call whose operation key is known: recorded as received, answered from the first one. */
  async recordRepeat(call: Pick<SandboxCall, 'operationKey' | 'kind' | 'maskedPan' | 'amount'>): Promise<SandboxCall | undefined> {
    const first = await this.find(call.operationKey);
    if (first) {
      await this.db.query('INSERT INTO sandbox_calls (operation_key, kind, repeat, masked_pan, amount, tid, result) VALUES ($1, $2, true, $3, $4, $5, $6)', [
        call.operationKey, call.kind, call.maskedPan ?? null, call.amount ?? null, first.tid ?? null, JSON.stringify(first.result),
      ]);
    }
    return first;
  }

  async find(operationKey: string): Promise<SandboxCall | undefined> {
    const rows: { operation_key: string; kind: SandboxCall['kind']; masked_pan: string | null; amount: string | null; tid: string | null; result: AcquirerResult }[] =
      await this.db.query('SELECT operation_key, kind, masked_pan, amount, tid, result FROM sandbox_calls WHERE operation_key = $1 AND NOT repeat', [operationKey]);
    const r = rows[0];
    return r && { operationKey: r.operation_key, kind: r.kind, maskedPan: r.masked_pan ?? undefined, amount: r.amount === null ? undefined : Number(r.amount), tid: r.tid ?? undefined, result: r.result };
  }

  async findApprovedAuthorization(tid: string): Promise<SandboxCall | undefined> {
    const rows: { operation_key: string }[] = await this.db.query(
      `SELECT operation_key FROM sandbox_calls WHERE kind = 'authorize' AND NOT repeat AND tid = $1 AND result->>'outcome' = 'approved'`,
      [tid],
    );
    return rows[0] ? this.find(rows[0].operation_key) : undefined;
  }
}
