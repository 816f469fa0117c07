import { readFileSync } from 'node:fs';
import { Client } from 'pg';
import { Webhook } from 'standardwebhooks';
import { openWebhookSecrets, sealedOf, SealedSecretColumns } from '@app/persistence';
import { generateKeySpec, parseKeyring } from '@app/vault/keyring';
import { receiverOf, saleBody } from '../support/money';
import { Listener, Received } from '../support/listener';
import { createMerchant, eventually, MerchantCredentials, runCli, runCliRaw, Stack, startStack } from '../support/stack';

jest.setTimeout(240_000);

// eslint-disable-next-line @typescript-eslint/no-explicit-any
type Json = Record<string, any>;

/**
 * Webhook secrets sealed at rest under SECRETS_KEKS (bound to merchant and column), against the
 * real stack: nothing clear in any table, a sealed value moved to another merchant refuses to
 * open (the delivery fails, nothing is sent), and `secrets:rotate-key` re-seals online (the
 * notifier signs throughout with the merchant's unchanged secret) and resumably.
 */
describe('sealed webhook secrets', () => {
  const oldSpec = process.env.SECRETS_KEKS as string;
  const newKid = 's2';
  const rotatedSpec = `${oldSpec},${generateKeySpec(newKid)}`;
  let stack: Stack;
  let db: Client;
  let listener: Listener;

  const receiver = (shop: MerchantCredentials, urlReturn: string) => receiverOf(stack.baseUrl, shop)('sale', saleBody(1_000, urlReturn));
  const verify = (r: Received, secret: string) => new Webhook(secret).verify(r.body, r.headers as Record<string, string>) as Json;
  const sealedRows = async (): Promise<(SealedSecretColumns & { id: string })[]> =>
    (await db.query('SELECT id, webhook_secrets_kek_id, webhook_secret_sealed, previous_webhook_secret_sealed FROM merchants ORDER BY id'))
      .rows;
  const deliveryOf = async (transactionId: string) =>
    (await db.query('SELECT * FROM deliveries WHERE transaction_id = $1', [transactionId.toLowerCase()])).rows[0];

  beforeAll(async () => {
    db = new Client({ connectionString: process.env.DATABASE_URL });
    await db.connect();
    listener = await new Listener().start();
    // The runbook's first step: the notifier holds the old and the new key before any row moves.
    stack = await startStack(
      {},
      {
        envFor: {
          notifier: {
            SECRETS_KEKS: rotatedSpec,
            WEBHOOK_SCHEDULE_SCALE: '0.0001',
            WEBHOOK_ALLOW_NETWORKS: '127.0.0.1/32',
            WEBHOOK_TIMEOUT_MS: '3000',
          },
        },
      },
    );
  });

  afterAll(async () => {
    await stack?.stop();
    await listener?.stop();
    await db?.end();
  });

  it('keeps no clear webhook secret in any column of any table after merchant:create and merchant:rotate-webhook-secret', async () => {
    const shop = await createMerchant('sealed at rest');
    const rotated = await runCli<Json>(['merchant:rotate-webhook-secret', '--merchant', shop.merchantId]);
    const secrets = [shop.webhookSecret, rotated.webhookSecret as string];
    const needles = secrets.flatMap((s) => [
      s,
      s.slice('whsec_'.length),
      Buffer.from(s).toString('hex'),
      Buffer.from(s.slice('whsec_'.length), 'base64').toString('hex'),
    ]);
    const tables: { s: string; t: string }[] = (
      await db.query(`SELECT table_schema AS s, table_name AS t FROM information_schema.tables
        WHERE table_type = 'BASE TABLE' AND table_schema NOT IN ('pg_catalog', 'information_schema')`)
    ).rows;
    expect(tables.length).toBeGreaterThan(5);
    const found: string[] = [];
    for (const { s, t } of tables) {
      const rows: { r: string }[] = (await db.query(`SELECT x::text AS r FROM "${s}"."${t}" AS x`)).rows;
      for (const { r } of rows) for (const n of needles) if (r.toLowerCase().includes(n.toLowerCase())) found.push(`${s}.${t}`);
    }
    expect(found).toEqual([]);
    // Yet both open, with the CLI's key, to what the CLI printed.
    const row = (await sealedRows()).find((r) => r.id === shop.internalId)!;
    expect(row.webhook_secrets_kek_id).toBe('s1');
    expect(openWebhookSecrets(parseKeyring(oldSpec, 'SECRETS_KEKS'), shop.internalId, sealedOf(row))).toEqual({
      current: rotated.webhookSecret,
      previous: shop.webhookSecret,
    });
    // And the database refuses a clear secret written into a sealed column.
    await expect(
      db.query('UPDATE merchants SET webhook_secret_sealed = $2 WHERE id = $1', [shop.internalId, Buffer.from(shop.webhookSecret)]),
    ).rejects.toMatchObject({
      code: '23514',
    });
  });

  it('refuses a sealed secret swapped to another merchant: the delivery fails, nothing is sent or logged; swapped back, a replay succeeds', async () => {
    const [a, b] = [await createMerchant('swap a'), await createMerchant('swap b')];
    const swap = () =>
      db.query(
        `UPDATE merchants AS m SET webhook_secret_sealed = o.webhook_secret_sealed FROM merchants AS o
        WHERE (m.id, o.id) IN (($1::uuid, $2::uuid), ($2::uuid, $1::uuid))`,
        [a.internalId, b.internalId],
      );
    await swap();
    const res = await receiver(a, listener.url('/swapped'));
    expect(res.json.status).toBe('8');
    const failed = await eventually(async () => {
      const d = await deliveryOf(res.json.transactionId);
      expect(d?.status).toBe('failed');
      return d;
    });
    expect(failed.last_error).toMatch(/does not open/);
    expect(listener.at('/swapped')).toHaveLength(0);
    const notifierLog = readFileSync(stack.notifier.logFile, 'utf8');
    for (const s of [a.webhookSecret, b.webhookSecret]) expect(notifierLog).not.toContain(s.slice('whsec_'.length));

    await swap();
    await new Promise((r) => setTimeout(r, 5_500)); // the notifier caches a merchant's secrets for 5 s
    expect(await runCli(['webhooks:replay', '--delivery', failed.id])).toMatchObject({ replay: 'queued' });
    const heard = await eventually(() => {
      const got = listener.at('/swapped');
      expect(got).toHaveLength(1);
      return got[0];
    });
    expect(verify(heard, a.webhookSecret)).toMatchObject({ type: 'transaction.status_changed' });
  });

  it('rotates the key online and resumably: webhooks verify with the same secret before, during and after', async () => {
    const shop = await createMerchant('rotation shop');
    const others = await Promise.all(Array.from({ length: 12 }, (_, i) => createMerchant(`rotation filler ${i}`)));
    const before = await sealedRows();
    expect(before.every((r) => r.webhook_secrets_kek_id === 's1')).toBe(true);

    // Sales for the shop the whole time, one after another.
    let selling = true;
    const sold: string[] = [];
    const seller = (async () => {
      while (selling) {
        const res = await receiver(shop, listener.url('/rotation'));
        sold.push(res.json.transactionId);
      }
    })();
    await eventually(() => expect(listener.at('/rotation').length).toBeGreaterThanOrEqual(2));

    // A first run stopped after one batch of 3: committed, partial.
    const first = await runCli<Json>(['secrets:rotate-key', '--batch-size', '3', '--max-batches', '1'], { SECRETS_KEKS: rotatedSpec });
    expect(first).toEqual({ kekId: newKid, resealed: 3, remaining: before.length - 3 });
    const halfway = await sealedRows();
    expect(halfway.filter((r) => r.webhook_secrets_kek_id === newKid)).toHaveLength(3);
    const duringCount = listener.at('/rotation').length;
    await eventually(() => expect(listener.at('/rotation').length).toBeGreaterThan(duringCount + 1));

    // The re-run continues and finishes, with progress on stderr and a final count.
    const second = await runCliRaw<Json>(['secrets:rotate-key', '--batch-size', '2'], { SECRETS_KEKS: rotatedSpec });
    expect(second.code).toBe(0);
    expect(second.json).toEqual({ kekId: newKid, resealed: before.length - 3, remaining: 0 });
    expect(second.stderr).toContain('"event":"resume"');
    expect(second.stderr).toContain('"event":"progress"');
    const afterCount = listener.at('/rotation').length;
    await eventually(() => expect(listener.at('/rotation').length).toBeGreaterThan(afterCount + 1));
    selling = false;
    await seller;

    // Every row is under the new key alone and opens to the same secrets as before.
    const after = await sealedRows();
    expect(after.every((r) => r.webhook_secrets_kek_id === newKid)).toBe(true);
    const onlyNew = parseKeyring(rotatedSpec.split(',').pop()!, 'SECRETS_KEKS');
    const old = parseKeyring(oldSpec, 'SECRETS_KEKS');
    for (const r of after) {
      const was = before.find((x) => x.id === r.id)!;
      expect(openWebhookSecrets(onlyNew, r.id, sealedOf(r))).toEqual(openWebhookSecrets(old, r.id, sealedOf(was)));
    }
    expect(openWebhookSecrets(onlyNew, others[0].internalId, sealedOf(after.find((r) => r.id === others[0].internalId)!)).current).toBe(
      others[0].webhookSecret,
    );

    // Every sale's webhook arrived, signed with the merchant's one secret throughout.
    await eventually(
      async () => {
        for (const id of sold) expect((await deliveryOf(id))?.status).toBe('succeeded');
      },
      { timeoutMs: 20_000 },
    );
    const got = listener.at('/rotation');
    expect(got.length).toBeGreaterThanOrEqual(sold.length);
    for (const r of got) expect(verify(r, shop.webhookSecret)).toMatchObject({ type: 'transaction.status_changed' });

    // Nothing left to move: refused, with the runbook's next step.
    await expect(runCli(['secrets:rotate-key'], { SECRETS_KEKS: rotatedSpec })).rejects.toThrow(/already sealed under s2/);
    // And a secret rotated now is sealed under the new key, the old one still signing.
    const rotated = await runCli<Json>(['merchant:rotate-webhook-secret', '--merchant', shop.merchantId], { SECRETS_KEKS: rotatedSpec });
    const row = (await sealedRows()).find((r) => r.id === shop.internalId)!;
    expect(openWebhookSecrets(onlyNew, shop.internalId, sealedOf(row))).toEqual({
      current: rotated.webhookSecret,
      previous: shop.webhookSecret,
    });
  });

  it('merchant:create without SECRETS_KEKS fails clearly and writes nothing', async () => {
    const r = await runCliRaw(['merchant:create', '--name', 'no key shop'], { SECRETS_KEKS: '' });
    expect(r.code).not.toBe(0);
    expect(r.stderr).toContain('SECRETS_KEKS');
    expect((await db.query(`SELECT count(*)::int AS n FROM merchants WHERE name = 'no key shop'`)).rows[0].n).toBe(0);
  });
});
