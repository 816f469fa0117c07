import { chmodSync, readFileSync, renameSync, writeFileSync, existsSync } from 'node:fs';
import { devKeysPath, readDevKeys } from '@app/platform';
import { generateKeySpec, Keyring, parseKeyring } from '@app/vault/keyring';
import { CliConfig } from '../config/cli.config';
import { CliError } from '../output';

/**
 * The keyrings the CLI reads (key-encryption keys, and the fingerprint keys it re-keys under), and
 * the letter their generated key ids start with.
 */
export const KEYRINGS = { VAULT_KEKS: 'k', SECRETS_KEKS: 's', FINGERPRINT_KEYS: 'f' } as const;
export type KeyringVariable = keyof typeof KEYRINGS;

export type KeyringSource = { kind: 'env'; keyring: Keyring } | { kind: 'dev-file'; keyring: Keyring; file: string };

/**
 * Where a key-encryption keyring comes from. In production it is configuration (VAULT_KEKS,
 * SECRETS_KEKS; KMS-ready): an operator adds the new version there as the active one, restarts
 * the apps that read it, then runs the rotation. In development it lives in the quick start's
 * dev-keys file, which this CLI may extend itself.
 */
export function keyringSource(cfg: CliConfig, name: KeyringVariable): KeyringSource {
  const fromEnv = cfg.env[name];
  if (fromEnv) return { kind: 'env', keyring: parseKeyring(fromEnv, name) };
  if (cfg.base.nodeEnv === 'production') throw new CliError(`${name} is required in production`);
  const file = devKeysPath(cfg.base.dataDir);
  const spec = readDevKeys(cfg.base.dataDir)[name];
  if (!spec) throw new CliError(`${name} is not set and ${file} has none (run "npm start" once)`);
  return { kind: 'dev-file', keyring: parseKeyring(spec, name), file };
}

/** Adds a new active version of `name` to the dev keys file (atomically), keeping the old ones to open. */
export function addDevKeyVersion(file: string, keyring: Keyring, name: KeyringVariable): Keyring {
  const next = `${KEYRINGS[name]}${keyring.kids().length + 1}_${Date.now().toString(36)}`;
  const spec = `${keyring.toSpec().replace(/;active=.*$/, '')},${generateKeySpec(next)}`;
  const updated = parseKeyring(spec, name);
  const lines = existsSync(file)
    ? readFileSync(file, 'utf8')
        .split('\n')
        .filter((l) => l && !l.startsWith(`${name}=`))
    : [];
  lines.push(`${name}=${updated.toSpec()}`);
  writeFileSync(`${file}.tmp`, lines.join('\n') + '\n', { mode: 0o600 });
  chmodSync(`${file}.tmp`, 0o600);
  renameSync(`${file}.tmp`, file);
  return updated;
}
