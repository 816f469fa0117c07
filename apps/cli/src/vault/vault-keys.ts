import { chmodSync, readFileSync, renameSync, writeFileSync, existsSync } from 'node:fs';
import { devKeysPath, readDevKeys } from '@app/platform';
import { generateKeySpec, Keyring, parseKeyring } from '@app/vault';
import { CliConfig } from '../config/cli.config';
import { CliError } from '../output';

export type KekSource = { kind: 'env'; keyring: Keyring } | { kind: 'dev-file'; keyring: Keyring; file: string };

/**
 * Where the key-encryption keys come from. In production they are configuration (VAULT_KEKS,
 * KMS-ready): an operator adds the new version there as the active one, restarts the tokenizers,
 * then runs the rotation. In development they live in the quick start's dev-keys file, which
 * this CLI may extend itself.
 */
export function kekSource(cfg: CliConfig): KekSource {
  return keyringSource(cfg, 'VAULT_KEKS');
}

/** A keyring variable (VAULT_KEKS, FINGERPRINT_KEYS) read the way the apps read it: configuration, or in development the dev-keys file. */
export function keyringSource(cfg: CliConfig, name: string): KekSource {
  const fromEnv = cfg.env[name];
  if (fromEnv) return { kind: 'env', keyring: parseKeyring(fromEnv, name) };
  if (cfg.base.nodeEnv === 'production') throw new CliError(`${name} is required in production`);
  const file = devKeysPath(cfg.base.dataDir);
  const spec = readDevKeys(cfg.base.dataDir)[name];
  if (!spec) throw new CliError(`${name} is not set and ${file} has none (run "npm start" once)`);
  return { kind: 'dev-file', keyring: parseKeyring(spec, name), file };
}

/** Adds a new active version to the dev keys file (atomically), keeping the old ones to unwrap. */
export function addDevKekVersion(file: string, keyring: Keyring): Keyring {
  const next = `k${keyring.kids().length + 1}_${Date.now().toString(36)}`;
  const spec = `${keyring.toSpec().replace(/;active=.*$/, '')},${generateKeySpec(next)}`;
  const updated = parseKeyring(spec, 'VAULT_KEKS');
  const lines = existsSync(file) ? readFileSync(file, 'utf8').split('\n').filter((l) => l && !l.startsWith('VAULT_KEKS=')) : [];
  lines.push(`VAULT_KEKS=${updated.toSpec()}`);
  writeFileSync(`${file}.tmp`, lines.join('\n') + '\n', { mode: 0o600 });
  chmodSync(`${file}.tmp`, 0o600);
  renameSync(`${file}.tmp`, file);
  return updated;
}
