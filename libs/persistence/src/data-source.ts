import 'reflect-metadata';
import { DataSource } from 'typeorm';
import { EnvReader, readBaseConfig } from '@app/platform/env';
import { dataSourceOptions } from './options';

/** For the TypeORM CLI (migration:generate/run/revert) and `npm run migrate`. */
const env = new EnvReader();
const base = readBaseConfig(env);
env.done('data-source');

export default new DataSource(dataSourceOptions(base.databaseUrl, 2));
