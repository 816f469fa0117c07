import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource } from 'typeorm';

/** A merchant's record of one Idempotency-Key: the request's fingerprint and, once answered, the answer. */
export interface IdempotencyRecord {
  requestHash: Buffer;
  /** Null while the first request with the key is still running. */
  responseStatus: number | null;
  responseBody: unknown;
  createdAt: Date;
}

/**
 * The idempotency_keys table: one row per (merchant, Idempotency-Key). Every statement is scoped
 * by both; what a key means (fingerprinting, waiting, replay) is the api's IdempotencyService.
 */
@Injectable()
export class IdempotencyKeysRepository {
  constructor(@InjectDataSource() private readonly db: DataSource) {}

  /**
   * Takes the key for a request with fingerprint `requestHash`; false when a record holds it. An
   * expired record (over 24 h old) is dropped first, so a key can be reused after that.
   */
  async claim(merchantId: string, key: string, requestHash: Buffer): Promise<boolean> {
    await this.db.query(`DELETE FROM idempotency_keys WHERE merchant_id = $1 AND key = $2 AND created_at < now() - interval '24 hours'`, [
      merchantId,
      key,
    ]);
    const rows: unknown[] = await this.db.query(
      'INSERT INTO idempotency_keys (merchant_id, key, request_hash) VALUES ($1, $2, $3) ON CONFLICT DO NOTHING RETURNING key',
      [merchantId, key, requestHash],
    );
    return rows.length === 1;
  }

  /** Stores the answer of the request that claimed the key. */
  async storeAnswer(merchantId: string, key: string, status: number, body: unknown): Promise<void> {
    await this.db.query('UPDATE idempotency_keys SET response_status = $3, response_body = $4 WHERE merchant_id = $1 AND key = $2', [
      merchantId,
      key,
      status,
      JSON.stringify(body),
    ]);
  }

  /** Gives the key back when its request failed without an answer to keep (an answered one stays). */
  async release(merchantId: string, key: string): Promise<void> {
    await this.db.query('DELETE FROM idempotency_keys WHERE merchant_id = $1 AND key = $2 AND response_status IS NULL', [merchantId, key]);
  }

  /** The record of the key; undefined when there is none. */
  async find(merchantId: string, key: string): Promise<IdempotencyRecord | undefined> {
    const rows: { request_hash: Buffer; response_status: number | null; response_body: unknown; created_at: Date }[] = await this.db.query(
      'SELECT request_hash, response_status, response_body, created_at FROM idempotency_keys WHERE merchant_id = $1 AND key = $2',
      [merchantId, key],
    );
    const row = rows[0];
    return (
      row && {
        requestHash: row.request_hash,
        responseStatus: row.response_status,
        responseBody: row.response_body,
        createdAt: row.created_at,
      }
    );
  }
}
