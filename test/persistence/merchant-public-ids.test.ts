import { randomUUID } from 'node:crypto';
import { QueryRunner } from 'typeorm';
import { isMerchantPublicId, newMerchantPublicId } from '@app/persistence';
import { backfillMerchantPublicIds, MerchantPublicIds1764500000000 } from '@app/persistence/migrations/1764500000000-merchant-public-ids';

import { MERCHANTS_BEFORE_PUBLIC_IDS, scratchSchema, ScratchSchema } from '../support/scratch-schema';

jest.setTimeout(60_000);

/**
 * The migration that gives merchants their public id, run (real Postgres) against a merchants
 * table of its own in a scratch schema, shaped as before the migration and holding merchants:
 * the run's own merchants table already has the column, so the backfill could not be seen there.
 */
describe('MerchantPublicIds migration (real Postgres)', () => {
  let scratch: ScratchSchema;
  let q: QueryRunner;
  const schema = `public_ids_probe_${process.pid}`;

  const insertMerchants = async (n: number) => {
    const ids = Array.from({ length: n }, () => randomUUID());
    await q.query(
      `INSERT INTO merchants (id, name, key_hash, webhook_secret) SELECT id, 'm', '\\x00', 's' FROM unnest($1::uuid[]) AS t (id)`,
      [ids],
    );
    return ids;
  };

  beforeAll(async () => {
    scratch = await scratchSchema(schema);
    q = scratch.q;
    // merchants as the migrations before this one leave it.
    await q.query(MERCHANTS_BEFORE_PUBLIC_IDS);
  });

  afterAll(async () => {
    await scratch?.drop();
  });

  it('backfills every existing merchant with a distinct, valid public id, then enforces shape and uniqueness', async () => {
    const ids = await insertMerchants(500);
    await q.startTransaction(); // as the migration runner does
    await new MerchantPublicIds1764500000000().up(q);
    await q.commitTransaction();

    const rows: { id: string; public_id: string }[] = await q.query('SELECT id, public_id FROM merchants');
    expect(rows.map((r) => r.id).sort()).toEqual([...ids].sort());
    expect(rows.filter((r) => !isMerchantPublicId(r.public_id))).toEqual([]);
    expect(new Set(rows.map((r) => r.public_id)).size).toBe(rows.length);

    const insert = (publicId: string | null) =>
      q.query(`INSERT INTO merchants (id, public_id, name, key_hash, webhook_secret) VALUES ($1, $2, 'n', '\\x00', 's')`, [
        randomUUID(),
        publicId,
      ]);
    await expect(insert(null)).rejects.toMatchObject({ code: '23502' });
    await expect(insert(rows[0].public_id)).rejects.toMatchObject({ code: '23505', constraint: 'merchants_public_id_key' });
    const good = newMerchantPublicId();
    const typo = good.slice(0, 9) + ((Number(good[9]) + 1) % 10);
    for (const bad of [typo, '0' + good.slice(1), good.slice(0, 9), good + '0', 'abcdefghij', `${good.slice(0, 5)} ${good.slice(6)}`]) {
      await expect(insert(bad)).rejects.toMatchObject({ code: '23514', constraint: 'merchants_public_id_shape' });
    }
    if (!rows.some((r) => r.public_id === good)) await insert(good);

    await q.startTransaction();
    await new MerchantPublicIds1764500000000().down(q);
    await q.commitTransaction();
    expect(
      (
        await q.query(
          `SELECT count(*)::int AS n FROM information_schema.columns WHERE table_schema = $1 AND table_name = 'merchants' AND column_name = 'public_id'`,
          [schema],
        )
      )[0].n,
    ).toBe(0);
  });

  it('draws again when a drawn id is taken, and fills only merchants without one', async () => {
    await q.query('DELETE FROM merchants');
    await q.query('ALTER TABLE merchants ADD COLUMN public_id text');
    await insertMerchants(3);
    const taken = newMerchantPublicId();
    await q.query(`INSERT INTO merchants (id, public_id, name, key_hash, webhook_secret) VALUES ($1, $2, 'n', '\\x00', 's')`, [
      randomUUID(),
      taken,
    ]);
    // The generator hands out the taken id twice before each fresh one.
    let n = 0;
    const fresh: string[] = [];
    const generate = () => {
      if (n++ % 3 < 2) return taken;
      let id = newMerchantPublicId();
      while (id === taken) id = newMerchantPublicId();
      fresh.push(id);
      return id;
    };
    expect(await backfillMerchantPublicIds(q, generate)).toBe(3);
    const rows: { public_id: string }[] = await q.query('SELECT public_id FROM merchants ORDER BY public_id');
    expect(rows.map((r) => r.public_id).sort()).toEqual([taken, ...fresh].sort());
    expect(n).toBe(9);
    expect(await backfillMerchantPublicIds(q, generate)).toBe(0);
  });
});
