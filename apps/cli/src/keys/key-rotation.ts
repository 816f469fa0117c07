import type { Keyring } from '@app/vault/keyring';
import { CliConfig } from '../config/cli.config';
import { CliError, printJson, progress } from '../output';
import { addDevKeyVersion, keyringSource, KeyringVariable } from './keyrings';

/** What a key rotation moves: rows not yet under the active key, in committed batches. */
export interface RotationTarget {
  keyring: KeyringVariable;
  /** How the output names the rows moved ("rewrapped", "resealed"). */
  movedLabel: string;
  /** For "every <noun> is already <state> <kid>". */
  noun: string;
  state: string;
  /** Who must hold the new key before the rows move under it. */
  readers: string;
  countRemaining(ring: Keyring): Promise<number>;
  /** Moves up to `limit` rows under the active key in one transaction; how many it moved (0: none left it may take). */
  batch(ring: Keyring, limit: number): Promise<number>;
}

export interface RotationOptions {
  batchSize?: number;
  /** Stop after this many batches (a run split in steps; the next run resumes). */
  maxBatches?: number;
}

/**
 * A key-encryption key rotation, the same for every keyring: in development with nothing left
 * to move, first adds a new active version to the dev keys file; then moves rows batch by
 * batch, printing progress on stderr, and prints what is left under older keys (0 means the old
 * keys may be removed). Each batch commits on its own and "not under the active key" is the
 * only state, so a killed run re-run continues where the last commit left off.
 */
export async function runKeyRotation(cfg: CliConfig, target: RotationTarget, opts: RotationOptions): Promise<void> {
  const source = keyringSource(cfg, target.keyring);
  let ring = source.keyring;
  const unfinished = await target.countRemaining(ring);
  if (source.kind === 'dev-file' && unfinished === 0) {
    ring = addDevKeyVersion(source.file, ring, target.keyring);
    progress({ event: 'new-key-version', kekId: ring.active.kid, file: source.file });
  } else if (unfinished === 0) {
    throw new CliError(
      `every ${target.noun} is already ${target.state} ${ring.active.kid}: add a new version to ${target.keyring} as the active one (and restart the ${target.readers}) first`,
    );
  } else {
    progress({ event: 'resume', kekId: ring.active.kid, remaining: unfinished });
  }
  const batchSize = opts.batchSize ?? 500;
  let moved = 0;
  for (let batches = 0; opts.maxBatches === undefined || batches < opts.maxBatches; batches++) {
    const done = await target.batch(ring, batchSize);
    if (done === 0) break;
    moved += done;
    progress({ event: 'progress', kekId: ring.active.kid, [target.movedLabel]: moved, remaining: await target.countRemaining(ring) });
  }
  printJson({ kekId: ring.active.kid, [target.movedLabel]: moved, remaining: await target.countRemaining(ring) });
}

export function parseBatchSize(v: string): number {
  const n = Number(v);
  if (!Number.isInteger(n) || n < 1 || n > 10_000) throw new CliError('--batch-size must be a whole number from 1 to 10000');
  return n;
}

export function parseMaxBatches(v: string): number {
  const n = Number(v);
  if (!Number.isInteger(n) || n < 1) throw new CliError('--max-batches must be a whole number from 1');
  return n;
}
