import { MigrationInterface, QueryRunner } from 'typeorm';
import { EnvReader, readBaseConfig, readKeyVariable } from '@app/platform/env';
import { Keyring, parseKeyring } from '@app/vault/keyring';
import { writeSealedSecrets } from '../merchants/merchants.repository';
import { openWebhookSecrets, sealWebhookSecrets } from '../merchants/webhook-secret-seal';
import type { Queryable } from './1764500000000-merchant-public-ids';

const CHUNK = 1000;

/**
 * SECRETS_KEKS as the apps read it (the environment; in development, the quick start's dev keys
 * file), asked for only when there are rows to seal or open, so a fresh database needs no key.
 */
function secretsKeyring(rows: number, doing: string): Keyring {
  const r = new EnvReader();
  const base = readBaseConfig(r);
  // Read here, not through libs/boot: boot imports this library, so that would be a cycle.
  const spec = readKeyVariable(r, base, 'SECRETS_KEKS');
  const ring = (spec && r.parse('SECRETS_KEKS', () => parseKeyring(spec, 'SECRETS_KEKS'))) as Keyring;
  try {
    r.done('migration SealedWebhookSecrets');
  } catch (e) {
    throw new Error(
      `${rows} merchant(s) have webhook secrets to ${doing}: give the migration the SECRETS_KEKS the notifier and the CLI use.\n${(e as Error).message}`,
    );
  }
  return ring;
}

/** Seals every clear webhook secret in place, CHUNK rows per statement; returns how many merchants it sealed. */
export async function sealClearWebhookSecrets(q: Queryable, ring?: Keyring): Promise<number> {
  const [{ n }]: { n: number }[] = await q.query(`SELECT count(*)::int AS n FROM merchants WHERE webhook_secret_sealed IS NULL`);
  if (n === 0) return 0;
  const keys = ring ?? secretsKeyring(n, 'seal');
  let sealed = 0;
  for (;;) {
    const rows: { id: string; webhook_secret: string; previous_webhook_secret: string | null }[] = await q.query(
      `SELECT id, webhook_secret, previous_webhook_secret FROM merchants WHERE webhook_secret_sealed IS NULL ORDER BY id LIMIT ${CHUNK}`,
    );
    if (rows.length === 0) return sealed;
    const out = rows.map((r) =>
      sealWebhookSecrets(keys, r.id, { current: r.webhook_secret, previous: r.previous_webhook_secret ?? undefined }),
    );
    await writeSealedSecrets(
      q,
      keys.active.kid,
      rows.map((r) => r.id),
      out,
    );
    sealed += rows.length;
  }
}

/**
 * Webhook secrets sealed at rest (AES-256-GCM under SECRETS_KEKS, bound to merchant and column,
 * see webhook-secret-seal.ts): new sealed columns, every existing clear secret sealed into them,
 * then the clear columns dropped. A CHECK refuses a sealed column that holds a clear secret's
 * prefix, so a code path that forgot to seal fails loudly instead of storing it.
 */
export class SealedWebhookSecrets1764600000000 implements MigrationInterface {
  name = 'SealedWebhookSecrets1764600000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(
      `ALTER TABLE merchants ADD COLUMN webhook_secrets_kek_id text, ADD COLUMN webhook_secret_sealed bytea, ADD COLUMN previous_webhook_secret_sealed bytea`,
    );
    await sealClearWebhookSecrets(q);
    await q.query(`ALTER TABLE merchants DROP COLUMN webhook_secret, DROP COLUMN previous_webhook_secret,
      ALTER COLUMN webhook_secrets_kek_id SET NOT NULL, ALTER COLUMN webhook_secret_sealed SET NOT NULL,
      ADD CONSTRAINT merchants_webhook_secrets_sealed CHECK (
        position('\\x77687365635f'::bytea IN webhook_secret_sealed) = 0
        AND position('\\x77687365635f'::bytea IN coalesce(previous_webhook_secret_sealed, ''::bytea)) = 0)`);
  }

  /** Back to clear columns: needs every key the rows are sealed under. */
  async down(q: QueryRunner): Promise<void> {
    await q.query(`ALTER TABLE merchants ADD COLUMN webhook_secret text, ADD COLUMN previous_webhook_secret text`);
    const [{ n }]: { n: number }[] = await q.query(`SELECT count(*)::int AS n FROM merchants`);
    if (n > 0) {
      const ring = secretsKeyring(n, 'open');
      const rows: { id: string; kid: string; cur: Buffer; prev: Buffer | null }[] = await q.query(
        `SELECT id, webhook_secrets_kek_id AS kid, webhook_secret_sealed AS cur, previous_webhook_secret_sealed AS prev FROM merchants`,
      );
      const open = rows.map((r) => openWebhookSecrets(ring, r.id, { kid: r.kid, current: r.cur, previous: r.prev }));
      await q.query(
        `UPDATE merchants AS m SET webhook_secret = u.cur, previous_webhook_secret = u.prev FROM unnest($1::uuid[], $2::text[], $3::text[]) AS u (id, cur, prev) WHERE m.id = u.id`,
        [rows.map((r) => r.id), open.map((s) => s.current), open.map((s) => s.previous ?? null)],
      );
    }
    await q.query(`ALTER TABLE merchants ALTER COLUMN webhook_secret SET NOT NULL, DROP CONSTRAINT merchants_webhook_secrets_sealed,
      DROP COLUMN webhook_secrets_kek_id, DROP COLUMN webhook_secret_sealed, DROP COLUMN previous_webhook_secret_sealed`);
  }
}
