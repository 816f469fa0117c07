/**
 * `node dist/scripts/dev-keys.js`: writes `${DATA_DIR}/dev-keys.env` if it does not exist yet.
 * The compose stack runs it once before the apps so that `docker compose up` works from a fresh
 * clone; the quick start does the same itself. Prints where the keys are, never the keys.
 */
import { resolve } from 'node:path';
import { ensureDevKeys } from './lib/dev-keys';

const { file, created } = ensureDevKeys(resolve(process.env.DATA_DIR || '.data'));
process.stdout.write(JSON.stringify({ devKeys: file, created }) + '\n');
