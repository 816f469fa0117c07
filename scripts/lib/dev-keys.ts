import { randomBytes } from 'node:crypto';
import { appendFileSync, chmodSync, existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';

/** The variables every app may need; apps fall back to `${DATA_DIR}/dev-keys.env` outside production. */
export const KEY_VARIABLES = [
  'TRANSIT_KEYS',
  'VAULT_KEKS',
  'FINGERPRINT_KEYS',
  'SECRETS_KEKS',
  'CONSOLE_SESSION_KEY',
  'PORTAL_LINK_KEY',
] as const;
export type KeyVariable = (typeof KEY_VARIABLES)[number];
export type KeySet = Record<KeyVariable, string>;
/** Keys added to an existing dev keys file that lacks them (regenerating the others would orphan data). */
const ADDABLE: KeyVariable[] = ['SECRETS_KEKS', 'CONSOLE_SESSION_KEY', 'PORTAL_LINK_KEY'];

const key32 = () => randomBytes(32).toString('base64');

/** Fresh key material in the `kid:base64-32-bytes` form the apps parse. */
export function generateKeys(): KeySet {
  return {
    TRANSIT_KEYS: `t1:${key32()}`,
    VAULT_KEKS: `k1:${key32()}`,
    FINGERPRINT_KEYS: `f1:${key32()}`,
    SECRETS_KEKS: `s1:${key32()}`,
    // Signs the operator console's session cookies (the api only); no kid: a new key signs everyone out.
    CONSOLE_SESSION_KEY: key32(),
    // Signs merchant portal links and the portal's session cookies (the api and the CLI); a new key ends every link.
    PORTAL_LINK_KEY: key32(),
  };
}

export function devKeysFile(dataDir: string): string {
  return join(dataDir, 'dev-keys.env');
}

/** KEY=VALUE lines, as the apps (and `docker compose --env-file`) read them. */
export function parseEnvFile(text: string): Record<string, string> {
  const out: Record<string, string> = {};
  for (const line of text.split('\n')) {
    const m = /^\s*([A-Z_][A-Z0-9_]*)\s*=\s*(.*?)\s*$/.exec(line);
    if (m) out[m[1]] = m[2];
  }
  return out;
}

/**
 * Generates the development keys once and never again: the vault's records are encrypted under
 * them, so a new set would make every stored card unreadable. The exclusive create ('wx') means
 * two quick starts racing on a fresh folder still end up with one set.
 */
export function ensureDevKeys(dataDir: string): { file: string; keys: KeySet; created: boolean } {
  const file = devKeysFile(dataDir);
  let created = false;
  if (!existsSync(file)) {
    mkdirSync(dirname(file), { recursive: true });
    const keys = generateKeys();
    const body = [
      '# Development keys, generated once by the quick start. Never use them in production.',
      '# Losing this file makes the cards vaulted under it unreadable.',
      ...KEY_VARIABLES.map((k) => `${k}=${keys[k]}`),
      '',
    ].join('\n');
    try {
      writeFileSync(file, body, { mode: 0o600, flag: 'wx' });
      created = true;
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code !== 'EEXIST') throw e;
    }
  }
  // Secrets: whatever created the file, only its owner may read it.
  chmodSync(file, 0o600);
  let parsed = parseEnvFile(readFileSync(file, 'utf8'));
  // A file from before a keyring existed gets it appended: nothing can be sealed under a key
  // that was never there (SECRETS_KEKS, CONSOLE_SESSION_KEY and PORTAL_LINK_KEY came after the first quick starts).
  const addable = ADDABLE.filter((k) => !parsed[k]);
  if (addable.length) {
    const fresh = generateKeys();
    appendFileSync(file, addable.map((k) => `${k}=${fresh[k]}\n`).join(''));
    parsed = parseEnvFile(readFileSync(file, 'utf8'));
  }
  const missing = KEY_VARIABLES.filter((k) => !parsed[k]);
  if (missing.length) {
    throw new Error(`${file} lacks ${missing.join(', ')}; add them by hand (regenerating would orphan vaulted cards)`);
  }
  return { file, keys: parsed as KeySet, created };
}
