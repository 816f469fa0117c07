import { Command, CommandRunner, Option } from 'nest-commander';
import { CliConfig } from '../config/cli.config';
import { CliError, printJson, progress } from '../output';
import { VaultRotationService } from './vault-rotation.service';
import { addDevKekVersion, kekSource, keyringSource } from './vault-keys';
import { RefingerprintService } from './refingerprint.service';

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

  async run(_args: string[], opts: { batchSize?: number }): Promise<void> {
    const source = kekSource(this.config);
    let keyring = source.keyring;
    const unfinished = await this.rotation.countRemaining(keyring);
    if (source.kind === 'dev-file' && unfinished === 0) {
      keyring = addDevKekVersion(source.file, keyring);
      progress({ event: 'new-key-version', kekId: keyring.active.kid, file: source.file });
    } else if (unfinished === 0) {
      throw new CliError(
        `every record is already wrapped by ${keyring.active.kid}: add a new version to VAULT_KEKS as the active one (and restart the tokenizers) first`,
      );
    } else {
      progress({ event: 'resume', kekId: keyring.active.kid, remaining: unfinished });
    }
    const result = await this.rotation.rewrapAll(keyring, opts.batchSize ?? 500, (p) => progress({ event: 'progress', ...p }));
    printJson(result);
  }

  @Option({ flags: '--batch-size <n>', description: 'records per transaction (default 500)' })
  parseBatchSize(v: string): number {
    return wholeNumber('--batch-size', v, 10_000);
  }
}

@Command({
  name: 'vault:refingerprint',
  description: 'Recompute every card fingerprint not under the active FINGERPRINT_KEYS key (online, resumable); ends with the rows left under older keys',
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
    const kek = kekSource(this.config).keyring;
    const result = await this.pass.refingerprintAll(fingerprints, kek, { batchSize: opts.batchSize ?? 500, maxBatches: opts.maxBatches, pauseMs: opts.pauseMs }, (event, p) =>
      progress({ event, ...p }),
    );
    printJson({ ...result, rowsByKid: await this.pass.countByKid() });
  }

  @Option({ flags: '--batch-size <n>', description: 'records per transaction (default 500)' })
  parseBatchSize(v: string): number {
    return wholeNumber('--batch-size', v, 10_000);
  }

  @Option({ flags: '--max-batches <n>', description: 'stop after this many batches and leave the rest for the next run (default: all)' })
  parseMaxBatches(v: string): number {
    return wholeNumber('--max-batches', v, 1_000_000);
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
