import { Command, CommandRunner, Option } from 'nest-commander';
import { CliConfig } from '../config/cli.config';
import { parseBatchSize, parseMaxBatches, RotationOptions, runKeyRotation } from '../keys/key-rotation';
import { VaultRotationService } from './vault-rotation.service';
import { CliError, printJson, progress } from '../output';
import { Guarded } from '../operators/guarded';
import { keyringSource } from '../keys/keyrings';
import { RefingerprintService } from './refingerprint.service';

@Guarded('admin', 'vault:rotate-key')
@Command({
  name: 'vault:rotate-key',
  description: 'Re-wrap every data key under the active key-encryption key (in development, first adds a new version); resumable',
})
export class VaultRotateKeyCommand extends CommandRunner {
  constructor(
    private readonly rotation: VaultRotationService,
    private readonly config: CliConfig,
  ) {
    super();
  }

  run(_args: string[], opts: RotationOptions): Promise<void> {
    return runKeyRotation(this.config, this.rotation, opts);
  }

  @Option({ flags: '--batch-size <n>', description: 'records per transaction (default 500)' })
  parseBatchSize(v: string): number {
    return parseBatchSize(v);
  }

  @Option({ flags: '--max-batches <n>', description: 'stop after this many batches (run again to continue)' })
  parseMaxBatches(v: string): number {
    return parseMaxBatches(v);
  }
}

@Guarded('admin', 'vault:refingerprint')
@Command({
  name: 'vault:refingerprint',
  description:
    'Recompute every card fingerprint not under the active FINGERPRINT_KEYS key (online, resumable); ends with the rows left under older keys',
})
export class VaultRefingerprintCommand extends CommandRunner {
  constructor(
    private readonly pass: RefingerprintService,
    private readonly config: CliConfig,
  ) {
    super();
  }

  async run(_args: string[], opts: { batchSize?: number; maxBatches?: number; pauseMs?: number }): Promise<void> {
    const fingerprints = keyringSource(this.config, 'FINGERPRINT_KEYS').keyring;
    const kek = keyringSource(this.config, 'VAULT_KEKS').keyring;
    const result = await this.pass.refingerprintAll(
      fingerprints,
      kek,
      { batchSize: opts.batchSize ?? 500, maxBatches: opts.maxBatches, pauseMs: opts.pauseMs },
      (event, p) => progress({ event, ...p }),
    );
    printJson({ ...result, rowsByKid: await this.pass.countByKid() });
  }

  @Option({ flags: '--batch-size <n>', description: 'records per transaction (default 500)' })
  parseBatchSize(v: string): number {
    return parseBatchSize(v);
  }

  @Option({ flags: '--max-batches <n>', description: 'stop after this many batches (run again to continue)' })
  parseMaxBatches(v: string): number {
    return parseMaxBatches(v);
  }

  @Option({ flags: '--pause-ms <n>', description: 'milliseconds to wait between batches, to spare live traffic (default 0)' })
  parsePauseMs(v: string): number {
    return wholeNumber('--pause-ms', v, 60_000);
  }
}

function wholeNumber(flag: string, v: string, max: number): number {
  const n = Number(v);
  if (!Number.isInteger(n) || n < 1 || n > max) throw new CliError(`${flag} must be a whole number from 1 to ${max}`);
  return n;
}
