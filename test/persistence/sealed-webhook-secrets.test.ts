import { randomUUID } from 'node:crypto';
import { QueryRunner } from 'typeorm';
import { newMerchantPublicId, openWebhookSecrets, sealedOf } from '@app/persistence';
import { SealedWebhookSecrets1764600000000 } from '@app/persistence/migrations/1764600000000-sealed-webhook-secrets';
import { parseKeyring } from '@app/vault/keyring';
import { MERCHANTS_BEFORE_PUBLIC_IDS, scratchSchema, ScratchSchema } from '../support/scratch-schema';

jest.setTimeout(60_000);

/**
 * The migration that seals the webhook secrets, run (real Postgres) against a merchants table of
 * its own in a scratch schema, shaped and filled as before the migration (clear secrets): the
 * run's own merchants table is already migrated. Up seals and drops the clear columns; without
 * SECRETS_KEKS it refuses, naming the variable, and leaves the rows as they were; down restores.
 */
describe('SealedWebhookSecrets migration (real Postgres)', () => {
  let scratch: ScratchSchema;
  let q: QueryRunner;
  const schema = `sealed_secrets_probe_${process.pid}`;
  const ring = parseKeyring(process.env.SECRETS_KEKS as string, 'SECRETS_KEKS');
  const merchants = Array.from({ length: 1_203 }, (_, i) => ({
    id: randomUUID(),
    current: `whsec_current${i}${randomUUID()}`,
    previous: i % 3 === 0 ? `whsec_previous${i}${randomUUID()}` : null,
  }));

  const inTransaction = async (fn: () => Promise<void>) => {
    await q.startTransaction(); // as the migration runner does
    try {
      await fn();
      await q.commitTransaction();
    } catch (e) {
      await q.rollbackTransaction();
      throw e;
    }
  };
  const columns = async () =>
    (
      (await q.query(`SELECT column_name FROM information_schema.columns WHERE table_schema = $1 AND table_name = 'merchants'`, [
        schema,
      ])) as { column_name: string }[]
    )
      .map((c) => c.column_name)
      .sort();

  beforeAll(async () => {
    scratch = await scratchSchema(schema);
    q = scratch.q;
    // merchants as the migrations before this one leave it.
    await q.query(MERCHANTS_BEFORE_PUBLIC_IDS);
    await q.query(`ALTER TABLE merchants ADD COLUMN public_id text NOT NULL UNIQUE`);
    await q.query(
      `INSERT INTO merchants (id, name, key_hash, webhook_secret, previous_webhook_secret, public_id)
       SELECT id, 'm', '\\x00', cur, prev, pid FROM unnest($1::uuid[], $2::text[], $3::text[], $4::text[]) AS t (id, cur, prev, pid)`,
      [
        merchants.map((m) => m.id),
        merchants.map((m) => m.current),
        merchants.map((m) => m.previous),
        merchants.map(() => newMerchantPublicId() + randomUUID()),
      ],
    );
  });

  afterAll(async () => {
    await scratch?.drop();
  });

  it('without SECRETS_KEKS refuses to run, naming the variable, and leaves the clear rows as they were', async () => {
    const saved = process.env.SECRETS_KEKS;
    delete process.env.SECRETS_KEKS;
    try {
      await expect(inTransaction(() => new SealedWebhookSecrets1764600000000().up(q))).rejects.toThrow(
        /1203 merchant\(s\) have webhook secrets to seal: give the migration the SECRETS_KEKS/,
      );
    } finally {
      process.env.SECRETS_KEKS = saved;
    }
    expect(await columns()).toContain('webhook_secret');
    expect(await columns()).not.toContain('webhook_secret_sealed');
  });

  it('seals every clear secret, bound to its merchant, and drops the clear columns', async () => {
    await inTransaction(() => new SealedWebhookSecrets1764600000000().up(q));
    const cols = await columns();
    expect(cols).not.toContain('webhook_secret');
    expect(cols).not.toContain('previous_webhook_secret');
    const rows = await q.query(`SELECT id, webhook_secrets_kek_id, webhook_secret_sealed, previous_webhook_secret_sealed FROM merchants`);
    expect(rows).toHaveLength(merchants.length);
    const byId = new Map(merchants.map((m) => [m.id, m]));
    for (const r of rows) {
      const m = byId.get(r.id)!;
      expect(r.webhook_secrets_kek_id).toBe(ring.active.kid);
      expect(r.webhook_secret_sealed.toString('latin1')).not.toContain('whsec_');
      expect(openWebhookSecrets(ring, r.id, sealedOf(r))).toEqual(
        m.previous ? { current: m.current, previous: m.previous } : { current: m.current },
      );
    }
    // The CHECK keeps clear secrets out of the sealed columns.
    await expect(
      q.query(`UPDATE merchants SET previous_webhook_secret_sealed = $2 WHERE id = $1`, [merchants[1].id, Buffer.from('whsec_clear')]),
    ).rejects.toMatchObject({ code: '23514' });
  });

  it('down opens them back into clear columns', async () => {
    await inTransaction(() => new SealedWebhookSecrets1764600000000().down(q));
    const cols = await columns();
    expect(cols).toContain('webhook_secret');
    expect(cols).not.toContain('webhook_secret_sealed');
    const rows: { id: string; webhook_secret: string; previous_webhook_secret: string | null }[] = await q.query(
      `SELECT id, webhook_secret, previous_webhook_secret FROM merchants`,
    );
    const byId = new Map(rows.map((r) => [r.id, r]));
    for (const m of merchants) expect(byId.get(m.id)).toEqual({ id: m.id, webhook_secret: m.current, previous_webhook_secret: m.previous });
  });
});
