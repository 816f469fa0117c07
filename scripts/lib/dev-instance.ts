import { randomBytes } from 'node:crypto';
import { chmodSync, existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

/**
 * What `npm start` keeps apart per checkout when DATABASE_URL and QUEUE_PREFIX are not set: the
 * database and the queues' key prefix. The development keys are made per DATA_DIR, so a database
 * or a queue shared by two checkouts would hold data one checkout's keys cannot open, an admin
 * whose token only the other checkout saved, and jobs the other checkout's workers take.
 */
export interface DevInstance {
  database: string;
  queuePrefix: string;
}

/** The database and queue prefix a DATA_DIR from before per-checkout names used, and keeps using. */
export const SHARED_INSTANCE: DevInstance = { database: 'gateway', queuePrefix: 'gw' };

/**
 * This DATA_DIR's instance: read from `instance.json`, or named on first use (`gateway_<6 hex>`
 * and `gw<6 hex>`). A DATA_DIR that already holds development keys but no name is from before:
 * it keeps the shared names its data lives under. Deleting DATA_DIR starts from scratch.
 */
export function devInstance(dataDir: string): { instance: DevInstance; created: boolean } {
  const file = join(dataDir, 'instance.json');
  if (existsSync(file)) {
    const saved = JSON.parse(readFileSync(file, 'utf8')) as Partial<DevInstance>;
    if (isName(saved.database) && isName(saved.queuePrefix))
      return { instance: { database: saved.database, queuePrefix: saved.queuePrefix }, created: false };
    throw new Error(`${file} does not name a database and a queue prefix: delete it (or all of ${dataDir}) to start from scratch`);
  }
  const id = randomBytes(3).toString('hex');
  const instance = existsSync(join(dataDir, 'dev-keys.env')) ? SHARED_INSTANCE : { database: `gateway_${id}`, queuePrefix: `gw${id}` };
  writeFileSync(file, JSON.stringify(instance, null, 2) + '\n', { mode: 0o600 });
  chmodSync(file, 0o600);
  return { instance, created: true };
}

const isName = (v: unknown): v is string => typeof v === 'string' && /^[a-z][a-z0-9_]{0,62}$/.test(v);
