import { Injectable, Logger } from '@nestjs/common';
import { createHmac } from 'node:crypto';
import { DomainError, ErrorCodes } from '@app/contracts';
import { IdempotencyKeysRepository } from '@app/persistence';
import { errorCodeOf, unavailabilityOf } from '@app/platform';
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
    private readonly keys: IdempotencyKeysRepository,
    private readonly config: ApiConfig,
  ) {
    this.hmacKey = createHmac('sha256', config.transitKeys.active.key).update('idempotency-request-hash').digest();
  }

  async run(
    merchantId: string,
    key: string | undefined,
    path: string,
    rawBody: unknown,
    work: () => Promise<{ status: number; body: unknown }>,
  ): Promise<StoredResponse> {
    if (key === undefined) return { ...(await work()), replayed: false };
    if (!KEY.test(key))
      throw DomainError.validation(
        ErrorCodes.InvalidField,
        'Idempotency-Key',
        'The Idempotency-Key header must be 1 to 255 visible ASCII characters.',
      );
    const hash = createHmac('sha256', this.hmacKey).update(path).update('\0').update(JSON.stringify(rawBody)).digest();
    const claimed = await this.keys.claim(merchantId, key, hash);
    if (!claimed) return this.replay(merchantId, key, hash);
    let result: { status: number; body: unknown };
    try {
      result = await work();
    } catch (e) {
      // A failure is not an answer to keep: the key is released so the merchant can retry it.
      await this.keys.release(merchantId, key).catch(() => undefined);
      throw e;
    }
    try {
      await this.keys.storeAnswer(merchantId, key, result.status, result.body);
    } catch (e) {
      // The work is done and recorded (a statement or lock timeout, or Postgres gone, hit only the
      // stored answer): its answer is the truth. The key stays claimed without an answer, so a
      // repeat is refused (409, "still being processed") instead of running the work twice.
      this.logger.warn(`idempotent answer not stored: ${unavailabilityOf(e) ?? 'unexpected error'} (code ${errorCodeOf(e, 'none')})`);
    }
    return { ...result, replayed: false };
  }

  private async replay(merchantId: string, key: string, hash: Buffer): Promise<StoredResponse> {
    const deadline = Date.now() + this.config.saleSyncWaitMs + 5_000;
    for (;;) {
      const row = await this.keys.find(merchantId, key);
      if (!row)
        throw new DomainError(
          'unavailable',
          ErrorCodes.ServiceUnavailable,
          'The first request with this Idempotency-Key failed; retry it.',
        );
      if (!row.requestHash.equals(hash)) {
        throw new DomainError(
          'conflict',
          ErrorCodes.IdempotencyConflict,
          'This Idempotency-Key was already used with a different request body.',
          'Idempotency-Key',
        );
      }
      if (row.responseStatus !== null && Date.now() - new Date(row.createdAt).getTime() < TTL_MS)
        return { status: row.responseStatus, body: row.responseBody, replayed: true };
      if (Date.now() > deadline) {
        throw new DomainError(
          'conflict',
          ErrorCodes.IdempotencyConflict,
          'A request with this Idempotency-Key is still being processed.',
          'Idempotency-Key',
        );
      }
      await new Promise((r) => setTimeout(r, 50));
    }
  }
}
