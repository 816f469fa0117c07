import { Injectable, Logger } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { createHmac } from 'node:crypto';
import { DataSource } from 'typeorm';
import { DomainError, ErrorCodes } from '@app/contracts';
import { unavailabilityOf } from '@app/platform';
import { ApiConfig } from '../config/api.config';

export interface StoredResponse {
  status: number;
  body: unknown;
  replayed: boolean;
}

const KEY = /^[\x21-\x7e]{1,255}$/;
const TTL_MS = 24 * 3600 * 1000;

/**
 * Idempotency-Key on POST: the first request with a key runs and its answer is stored; the same
 * key with the same body within 24 h gets that answer again; with another body, a 409. A
 * concurrent duplicate waits for the first one's answer instead of running a second time.
 * The request fingerprint is an HMAC (the body can hold a card number: never an unkeyed hash).
 */
@Injectable()
export class IdempotencyService {
  private readonly logger = new Logger(IdempotencyService.name);
  private readonly hmacKey: Buffer;

  constructor(
    @InjectDataSource() private readonly db: DataSource,
    private readonly config: ApiConfig,
  ) {
    this.hmacKey = createHmac('sha256', config.transitKeys.active.key).update('idempotency-request-hash').digest();
  }

  async run(merchantId: string, key: string | undefined, path: string, rawBody: unknown, work: () => Promise<{ status: number; body: unknown }>): Promise<StoredResponse> {
    if (key === undefined) return { ...(await work()), replayed: false };
    if (!KEY.test(key)) throw DomainError.validation(ErrorCodes.InvalidField, 'Idempotency-Key', 'The Idempotency-Key header must be 1 to 255 visible ASCII characters.');
    const hash = createHmac('sha256', this.hmacKey).update(path).update('\0').update(JSON.stringify(rawBody)).digest();
    const claimed = await this.claim(merchantId, key, hash);
    if (!claimed) return this.replay(merchantId, key, hash);
    let result: { status: number; body: unknown };
    try {
      result = await work();
    } catch (e) {
      // A failure is not an answer to keep: the key is released so the merchant can retry it.
      await this.db.query('DELETE FROM idempotency_keys WHERE merchant_id = $1 AND key = $2 AND response_status IS NULL', [merchantId, key]).catch(() => undefined);
      throw e;
    }
    try {
      await this.db.query('UPDATE idempotency_keys SET response_status = $3, response_body = $4 WHERE merchant_id = $1 AND key = $2', [merchantId, key, result.status, JSON.stringify(result.body)]);
    } catch (e) {
      // The work is done and recorded (a statement or lock timeout, or Postgres gone, hit only the
      // stored answer): its answer is the truth. The key stays claimed without an answer, so a
      // repeat is refused (409, "still being processed") instead of running the work twice.
      this.logger.warn(`idempotent answer not stored: ${unavailabilityOf(e) ?? 'unexpected error'} (code ${String((e as { code?: unknown }).code ?? 'none')})`);
    }
    return { ...result, replayed: false };
  }

  private async claim(merchantId: string, key: string, hash: Buffer): Promise<boolean> {
    // An expired record is replaced, so a key can be reused after 24 h.
    await this.db.query(`DELETE FROM idempotency_keys WHERE merchant_id = $1 AND key = $2 AND created_at < now() - interval '24 hours'`, [merchantId, key]);
    const rows = await this.db.query('INSERT INTO idempotency_keys (merchant_id, key, request_hash) VALUES ($1, $2, $3) ON CONFLICT DO NOTHING RETURNING key', [merchantId, key, hash]);
    return rows.length === 1;
  }

  private async replay(merchantId: string, key: string, hash: Buffer): Promise<StoredResponse> {
    const deadline = Date.now() + this.config.saleSyncWaitMs + 5_000;
    for (;;) {
      const rows: { request_hash: Buffer; response_status: number | null; response_body: unknown; created_at: Date }[] = await this.db.query(
        'SELECT request_hash, response_status, response_body, created_at FROM idempotency_keys WHERE merchant_id = $1 AND key = $2',
        [merchantId, key],
      );
      const row = rows[0];
      if (!row) throw new DomainError('unavailable', ErrorCodes.ServiceUnavailable, 'The first request with this Idempotency-Key failed; retry it.');
      if (!row.request_hash.equals(hash)) {
        throw new DomainError('conflict', ErrorCodes.IdempotencyConflict, 'This Idempotency-Key was already used with a different request body.', 'Idempotency-Key');
      }
      if (row.response_status !== null && Date.now() - new Date(row.created_at).getTime() < TTL_MS) return { status: row.response_status, body: row.response_body, replayed: true };
      if (Date.now() > deadline) {
        throw new DomainError('conflict', ErrorCodes.IdempotencyConflict, 'A request with this Idempotency-Key is still being processed.', 'Idempotency-Key');
      }
      await new Promise((r) => setTimeout(r, 50));
    }
  }
}
