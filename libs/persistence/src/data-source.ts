import 'reflect-metadata';
import { DataSource } from 'typeorm';
import { EnvReader, readBaseConfig } from '@app/platform/env';
import { dataSourceOptions } from './options';

/**
 * For the TypeORM CLI (migration:generate/run/revert) and `npm run migrate`, as the tables' owner:
 * MIGRATION_DATABASE_URL when set (straight to Postgres, where the apps' DATABASE_URL goes through
 * a pooler), else DATABASE_URL. TypeORM sends no named statements, so either works behind a pooler
 * in transaction mode.
 */
const env = new EnvReader();
const base = readBaseConfig(env);
const migrationUrl = env.url('MIGRATION_DATABASE_URL', base.databaseUrl, ['postgres:', 'postgresql:']);
env.done('data-source');

export default new DataSource(dataSourceOptions(migrationUrl, 2));
