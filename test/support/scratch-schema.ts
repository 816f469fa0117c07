import { DataSource, QueryRunner } from 'typeorm';
import { dataSourceOptions } from '@app/persistence';

/**
 * A schema of its own in the run's database, for a migration test that needs a table shaped as
 * before its migration (the run's own tables are already migrated). One connection, whose
 * search_path points there; `drop` removes it all.
 */
export interface ScratchSchema {
  db: DataSource;
  q: QueryRunner;
  drop(): Promise<void>;
}

export async function scratchSchema(name: string): Promise<ScratchSchema> {
  const db = await new DataSource(dataSourceOptions(process.env.DATABASE_URL as string, 1)).initialize();
  const q = db.createQueryRunner();
  await q.connect();
  await q.query(`CREATE SCHEMA ${name}`);
  await q.query(`SET search_path TO ${name}`);
  return {
    db,
    q,
    async drop() {
      await q.query(`DROP SCHEMA IF EXISTS ${name} CASCADE`);
      await q.query('RESET search_path');
      await q.release();
      await db.destroy();
    },
  };
}

/** `merchants` as the migrations up to 1764400000000 leave it (before public ids). */
export const MERCHANTS_BEFORE_PUBLIC_IDS = `CREATE TABLE merchants (
  id uuid PRIMARY KEY, name text NOT NULL, key_hash bytea NOT NULL, webhook_secret text NOT NULL,
  created_at timestamptz NOT NULL DEFAULT now(), key_rotated_at timestamptz, previous_webhook_secret text, previous_secret_expires_at timestamptz)`;
