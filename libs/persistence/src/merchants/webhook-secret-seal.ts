import { Keyring } from '@app/vault/keyring';
import { openSecret, sealSecret } from '@app/vault/secrets';

/** What the sealed values are bound to (besides the merchant): the names the clear columns had. */
export const CURRENT_SECRET = 'webhook_secret';
export const PREVIOUS_SECRET = 'previous_webhook_secret';

/** A merchant's webhook secrets as stored: both sealed under one key (`kid`), so a rotation moves them together. */
export interface SealedWebhookSecrets {
  kid: string;
  current: Buffer;
  previous: Buffer | null;
}

export interface WebhookSecrets {
  current: string;
  previous?: string;
}

/** Seals both secrets of merchant `merchantId` (internal id) under the active key of `ring`. */
export function sealWebhookSecrets(ring: Keyring, merchantId: string, secrets: WebhookSecrets): SealedWebhookSecrets {
  return {
    kid: ring.active.kid,
    current: sealSecret(ring, secrets.current, { merchantId, column: CURRENT_SECRET }).sealed,
    previous: secrets.previous === undefined ? null : sealSecret(ring, secrets.previous, { merchantId, column: PREVIOUS_SECRET }).sealed,
  };
}

/** Throws SecretOpenError (SecretKeyMissingError when `ring` lacks the key) and never says more. */
export function openWebhookSecrets(ring: Keyring, merchantId: string, sealed: SealedWebhookSecrets): WebhookSecrets {
  const current = openSecret(ring, { kid: sealed.kid, sealed: sealed.current }, { merchantId, column: CURRENT_SECRET });
  if (!sealed.previous) return { current };
  return { current, previous: openSecret(ring, { kid: sealed.kid, sealed: sealed.previous }, { merchantId, column: PREVIOUS_SECRET }) };
}

/** Under the active key of `ring` (unchanged when already there). */
export function resealWebhookSecrets(ring: Keyring, merchantId: string, sealed: SealedWebhookSecrets): SealedWebhookSecrets {
  return sealed.kid === ring.active.kid ? sealed : sealWebhookSecrets(ring, merchantId, openWebhookSecrets(ring, merchantId, sealed));
}

/** The SQL columns, and a row of them as node-postgres returns it. */
export const SEALED_SECRET_COLUMNS = 'webhook_secrets_kek_id, webhook_secret_sealed, previous_webhook_secret_sealed';
export interface SealedSecretColumns {
  webhook_secrets_kek_id: string;
  webhook_secret_sealed: Buffer;
  previous_webhook_secret_sealed: Buffer | null;
}
export const sealedOf = (r: SealedSecretColumns): SealedWebhookSecrets => ({ kid: r.webhook_secrets_kek_id, current: r.webhook_secret_sealed, previous: r.previous_webhook_secret_sealed });

/**
 * Stores sealed secrets (all under `kid`) for the merchants `ids`, in one statement. `q` is a
 * QueryRunner, a transaction's EntityManager or a DataSource.
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
