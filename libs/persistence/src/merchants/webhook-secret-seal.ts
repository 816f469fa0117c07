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
