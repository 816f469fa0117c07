import { MigrationInterface, QueryRunner } from 'typeorm';
import { newMerchantPublicId } from '../merchants/merchant-public-id';

/** What the backfill needs of a connection: a QueryRunner or a DataSource. */
export interface Queryable {
  // eslint-disable-next-line @typescript-eslint/no-explicit-any
  query(sql: string, params?: unknown[]): Promise<any>;
}

/**
 * Gives every merchant without a public id a fresh one, drawn in TypeScript (the same generator
 * merchant:create uses), one row at a time. A drawn id already taken is drawn again: the update
 * writes only when no other merchant has it (the migration's ALTER TABLE holds the table's lock,
 * so nothing else writes meanwhile; a unique violation would abort the migration's transaction).
 * Returns how many merchants it gave an id.
 */
export async function backfillMerchantPublicIds(q: Queryable, generate: () => string = newMerchantPublicId): Promise<number> {
  const rows: { id: string }[] = await q.query(`SELECT id FROM merchants WHERE public_id IS NULL ORDER BY created_at, id`);
  for (const { id } of rows) {
    for (let attempt = 1; ; attempt++) {
      const [, updated]: [unknown, number] = await q.query(
        `UPDATE merchants SET public_id = $2 WHERE id = $1 AND NOT EXISTS (SELECT 1 FROM merchants WHERE public_id = $2)`,
        [id, generate()],
      );
      if (updated === 1) break;
      if (attempt >= 100) throw new Error(`no free public id found for merchant ${id} in 100 draws`);
    }
  }
  return rows.length;
}

/**
 * Check that the Luhn digit holds, digit by digit (a CHECK may not call a subquery): position 10
 * is the check digit, and positions 1, 3, 5, 7 and 9 are doubled (a doubled digit above 4 loses 9).
 * Written out here rather than built from the generator's module, so the migration stays as it ran.
 */
const LUHN_HOLDS = `((
    2 * substr(public_id, 1, 1)::int - 9 * (substr(public_id, 1, 1)::int / 5) + substr(public_id, 2, 1)::int
  + 2 * substr(public_id, 3, 1)::int - 9 * (substr(public_id, 3, 1)::int / 5) + substr(public_id, 4, 1)::int
  + 2 * substr(public_id, 5, 1)::int - 9 * (substr(public_id, 5, 1)::int / 5) + substr(public_id, 6, 1)::int
  + 2 * substr(public_id, 7, 1)::int - 9 * (substr(public_id, 7, 1)::int / 5) + substr(public_id, 8, 1)::int
  + 2 * substr(public_id, 9, 1)::int - 9 * (substr(public_id, 9, 1)::int / 5) + substr(public_id, 10, 1)::int
  ) % 10 = 0)`;

/**
 * Merchants get a public id, the one merchant:create prints and a merchant authenticates with: the
 * SDKs of this API family refuse a merchantId longer than 10 characters, and the primary key is a
 * 36-character UUID. 10 digits, the first 1-9, the last a Luhn check digit. The UUID stays the
 * primary key and what every other table refers to. Existing merchants get one here; they may go
 * on sending their UUID (the API and the CLI accept both) until they switch.
 */
export class MerchantPublicIds1764500000000 implements MigrationInterface {
  name = 'MerchantPublicIds1764500000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`ALTER TABLE merchants ADD COLUMN public_id text`);
    await backfillMerchantPublicIds(q);
    await q.query(`ALTER TABLE merchants ALTER COLUMN public_id SET NOT NULL,
      ADD CONSTRAINT merchants_public_id_key UNIQUE (public_id),
      ADD CONSTRAINT merchants_public_id_shape CHECK (CASE WHEN public_id ~ '^[1-9][0-9]{9}$' THEN ${LUHN_HOLDS} ELSE false END)`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`ALTER TABLE merchants DROP COLUMN public_id`);
  }
}
