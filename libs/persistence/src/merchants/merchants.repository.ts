import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { randomUUID } from 'node:crypto';
import { DataSource } from 'typeorm';
import type { Keyring } from '@app/vault/keyring';
import type { MerchantEnvironment } from '@app/contracts';
import { isMerchantPublicId, isUuid, MERCHANT_PUBLIC_ID_CONSTRAINT, newMerchantPublicId } from './merchant-public-id';
import { openWebhookSecrets, resealWebhookSecrets, SealedWebhookSecrets, sealWebhookSecrets } from './webhook-secret-seal';
import {
  CreatedMerchant,
  limitsOf,
  MerchantCredentialsRow,
  MerchantRateLimits,
  NewMerchant,
  RateLimitColumns,
  SEALED_SECRET_COLUMNS,
  SealedSecretColumns,
  sealedOf,
} from './merchant-rows';

/**
 * Stores sealed secrets (all under `kid`) for the merchants `ids`, in one statement. `q` is a
 * QueryRunner, a transaction's EntityManager or a DataSource: the key rotation below and the
 * migration that first sealed the secrets write them alike.
 */
export async function writeSealedSecrets(
  q: { query(sql: string, params?: unknown[]): Promise<unknown> },
  kid: string,
  ids: string[],
  sealed: SealedWebhookSecrets[],
): Promise<void> {
  await q.query(
    `UPDATE merchants AS m SET webhook_secrets_kek_id = $1, webhook_secret_sealed = u.cur, previous_webhook_secret_sealed = u.prev
     FROM unnest($2::uuid[], $3::bytea[], $4::bytea[]) AS u (id, cur, prev) WHERE m.id = u.id`,
    [kid, ids, sealed.map((s) => s.current), sealed.map((s) => s.previous)],
  );
}

/** How a merchant id given by a person or a merchant is looked up: a public id, or (for a transition) the UUID. */
function lookup(given: string): { column: 'public_id' | 'id'; value: string } | undefined {
  const id = given.trim();
  if (isMerchantPublicId(id)) return { column: 'public_id', value: id };
  if (isUuid(id)) return { column: 'id', value: id.toLowerCase() };
  return undefined;
}

/**
 * The merchants table: every statement that reads or writes it lives here (other repositories only
 * check a merchant exists while writing their own rows). Inside the gateway a merchant is its UUID; a person or a merchant names it
 * by its public id (10 digits, see merchant-public-id.ts) or, for merchants integrated before,
 * by the UUID. `resolve` turns either into the UUID; `publicIdOf` goes back for output.
 */
@Injectable()
export class MerchantsRepository {
  constructor(@InjectDataSource() private readonly db: DataSource) {}

  /**
   * Inserts a merchant under a fresh public id, drawing again when the id is taken (unique
   * violation). Its webhook secret is stored sealed under the active key of `secrets` (SECRETS_KEKS).
   */
  async create(m: NewMerchant, secrets: Keyring, generate: () => string = newMerchantPublicId): Promise<CreatedMerchant> {
    const id = randomUUID();
    const sealed = sealWebhookSecrets(secrets, id, { current: m.webhookSecret });
    for (let attempt = 1; ; attempt++) {
      const publicId = generate();
      try {
        await this.db.query(
          `INSERT INTO merchants (id, public_id, name, key_hash, webhook_secrets_kek_id, webhook_secret_sealed, environment)
           VALUES ($1, $2, $3, $4, $5, $6, $7)`,
          [id, publicId, m.name, m.keyHash, sealed.kid, sealed.current, m.environment ?? 'test'],
        );
        return { id, publicId };
      } catch (e) {
        const taken =
          (e as { code?: string; constraint?: string }).code === '23505' &&
          (e as { constraint?: string }).constraint === MERCHANT_PUBLIC_ID_CONSTRAINT;
        if (!taken || attempt >= 10) throw e;
      }
    }
  }

  /** The internal id of the merchant named by `given` (public id, or UUID in any case); undefined when there is none. */
  async resolve(given: string): Promise<string | undefined> {
    const by = lookup(given);
    if (!by) return undefined;
    const rows: { id: string }[] = await this.db.query(`SELECT id FROM merchants WHERE ${by.column} = $1`, [by.value]);
    return rows[0]?.id;
  }

  /** What merchant:show prints (internal id): never a key hash or a secret. */
  async show(id: string): Promise<
    | {
        merchantId: string;
        name: string;
        environment: MerchantEnvironment;
        createdAt: string;
        limits: MerchantRateLimits;
        webhookThrottlePerS: number | null;
      }
    | undefined
  > {
    const rows: (RateLimitColumns & {
      public_id: string;
      name: string;
      environment: MerchantEnvironment;
      created_at: Date;
      webhook_throttle_per_s: number | null;
    })[] = await this.db.query(
      `SELECT public_id, name, environment, created_at, rate_limit_writes_per_s, rate_limit_reads_per_s, webhook_throttle_per_s
         FROM merchants WHERE id = $1`,
      [id],
    );
    const r = rows[0];
    return (
      r && {
        merchantId: r.public_id,
        name: r.name,
        environment: r.environment,
        createdAt: r.created_at.toISOString(),
        limits: limitsOf(r),
        webhookThrottlePerS: r.webhook_throttle_per_s,
      }
    );
  }

  /** Internal id, key hash and rate limits of the merchant named by `given` (as resolve), for authentication. */
  async credentialsOf(given: string): Promise<MerchantCredentialsRow | undefined> {
    const by = lookup(given);
    if (!by) return undefined;
    const rows: (RateLimitColumns & { id: string; key_hash: Buffer })[] = await this.db.query(
      `SELECT id, key_hash, rate_limit_writes_per_s, rate_limit_reads_per_s FROM merchants WHERE ${by.column} = $1`,
      [by.value],
    );
    return rows[0] && { id: rows[0].id, keyHash: rows[0].key_hash, limits: limitsOf(rows[0]) };
  }

  /**
   * Sets the merchant's rate limits (internal id): a number overrides the default, null returns to
   * it, undefined leaves the limit as it is. The limits as they now stand; undefined without such a merchant.
   */
  async setRateLimits(
    id: string,
    change: { writesPerS?: number | null; readsPerS?: number | null },
  ): Promise<MerchantRateLimits | undefined> {
    const [rows]: [RateLimitColumns[], number] = await this.db.query(
      `UPDATE merchants SET
         rate_limit_writes_per_s = CASE WHEN $2 THEN $3::integer ELSE rate_limit_writes_per_s END,
         rate_limit_reads_per_s = CASE WHEN $4 THEN $5::integer ELSE rate_limit_reads_per_s END
       WHERE id = $1 RETURNING rate_limit_writes_per_s, rate_limit_reads_per_s`,
      [id, change.writesPerS !== undefined, change.writesPerS ?? null, change.readsPerS !== undefined, change.readsPerS ?? null],
    );
    return rows[0] && limitsOf(rows[0]);
  }

  /** The merchant's webhook throttle in deliveries per second to each listener (null: none); undefined without such a merchant. */
  async webhookThrottleOf(id: string): Promise<number | null | undefined> {
    if (!isUuid(id)) return undefined;
    const rows: { per_s: number | null }[] = await this.db.query('SELECT webhook_throttle_per_s AS per_s FROM merchants WHERE id = $1', [
      id.toLowerCase(),
    ]);
    return rows.length ? rows[0].per_s : undefined;
  }

  /** Sets the merchant's webhook throttle (null: none); the value as it now stands, undefined without such a merchant. */
  async setWebhookThrottle(id: string, perS: number | null): Promise<{ perS: number | null } | undefined> {
    const [rows]: [{ per_s: number | null }[], number] = await this.db.query(
      'UPDATE merchants SET webhook_throttle_per_s = $2 WHERE id = $1 RETURNING webhook_throttle_per_s AS per_s',
      [id, perS],
    );
    return rows[0] && { perS: rows[0].per_s };
  }

  /** The public id of an internal id; undefined when there is no such merchant. */
  async publicIdOf(id: string): Promise<string | undefined> {
    if (!isUuid(id)) return undefined;
    const rows: { public_id: string }[] = await this.db.query('SELECT public_id FROM merchants WHERE id = $1', [id.toLowerCase()]);
    return rows[0]?.public_id;
  }

  /** The public id of each of `ids` (internal) that is a merchant, in one statement; keyed by the lower-case UUID. */
  async publicIdsOf(ids: readonly string[]): Promise<Map<string, string>> {
    const wanted = [...new Set(ids.filter(isUuid).map((id) => id.toLowerCase()))];
    if (!wanted.length) return new Map();
    const rows: { id: string; public_id: string }[] = await this.db.query(
      'SELECT id, public_id FROM merchants WHERE id = ANY($1::uuid[])',
      [wanted],
    );
    return new Map(rows.map((r) => [r.id, r.public_id]));
  }

  /** A new key hash for the merchant (internal id); false when there is none. */
  async rotateKey(id: string, keyHash: Buffer): Promise<boolean> {
    const [, updated]: [unknown, number] = await this.db.query('UPDATE merchants SET key_hash = $2, key_rotated_at = now() WHERE id = $1', [
      id,
      keyHash,
    ]);
    return updated === 1;
  }

  /**
   * A new webhook secret; the current one keeps signing for `graceS` seconds as the previous one.
   * Both are sealed again under the active key (the column is bound into each sealed value, so
   * the old one cannot just move over): the row is locked meanwhile, which a concurrent
   * `secrets:rotate-key` batch skips (SKIP LOCKED) or waits for. When that grace ends; undefined
   * without such a merchant.
   */
  async rotateWebhookSecret(id: string, secret: string, graceS: number, secrets: Keyring): Promise<Date | undefined> {
    return this.db.transaction(async (tx) => {
      const rows: SealedSecretColumns[] = await tx.query(`SELECT ${SEALED_SECRET_COLUMNS} FROM merchants WHERE id = $1 FOR UPDATE`, [id]);
      if (!rows[0]) return undefined;
      const { current } = openWebhookSecrets(secrets, id, sealedOf(rows[0]));
      const sealed = sealWebhookSecrets(secrets, id, { current: secret, previous: current });
      const [updated]: [{ expires: Date }[], number] = await tx.query(
        `UPDATE merchants SET webhook_secrets_kek_id = $2, webhook_secret_sealed = $3, previous_webhook_secret_sealed = $4,
           previous_secret_expires_at = now() + make_interval(secs => $5) WHERE id = $1 RETURNING previous_secret_expires_at AS expires`,
        [id, sealed.kid, sealed.current, sealed.previous, graceS],
      );
      return updated[0]?.expires;
    });
  }

  /**
   * The merchant's webhook secret that signs, plus the previous one while its grace period lasts:
   * sealed, as stored (the caller holds the key). Undefined without such a merchant.
   */
  async webhookSecretsOf(merchantId: string): Promise<SealedWebhookSecrets | undefined> {
    const rows: SealedSecretColumns[] = await this.db.query(
      `SELECT webhook_secrets_kek_id, webhook_secret_sealed,
         CASE WHEN previous_secret_expires_at > now() THEN previous_webhook_secret_sealed END AS previous_webhook_secret_sealed
       FROM merchants WHERE id = $1`,
      [merchantId],
    );
    return rows[0] && sealedOf(rows[0]);
  }

  /** Merchants whose webhook secrets are not under `kid` (what a key rotation has left to do). */
  async countSecretsNotUnder(kid: string): Promise<number> {
    const rows: { n: number }[] = await this.db.query('SELECT count(*)::int AS n FROM merchants WHERE webhook_secrets_kek_id <> $1', [kid]);
    return rows[0].n;
  }

  /**
   * One committed batch of a key rotation: up to `limit` merchants whose secrets are not under the
   * active key are re-sealed under it. Rows locked by someone else (another run, a secret being
   * rotated) are skipped, and the key-id predicate means a re-run only sees what is left, so a
   * killed run resumes where its last batch committed. Returns how many it re-sealed (0: done).
   */
  async resealSecretsBatch(secrets: Keyring, limit: number): Promise<number> {
    return this.db.transaction(async (tx) => {
      const rows: (SealedSecretColumns & { id: string })[] = await tx.query(
        `SELECT id, ${SEALED_SECRET_COLUMNS} FROM merchants WHERE webhook_secrets_kek_id <> $1 ORDER BY id LIMIT $2 FOR UPDATE SKIP LOCKED`,
        [secrets.active.kid, limit],
      );
      if (rows.length === 0) return 0;
      const out = rows.map((r) => resealWebhookSecrets(secrets, r.id, sealedOf(r)));
      await writeSealedSecrets(
        tx,
        secrets.active.kid,
        rows.map((r) => r.id),
        out,
      );
      return rows.length;
    });
  }
}
