import { Command, CommandRunner, Option } from 'nest-commander';
import { CliConfig } from '../config/cli.config';
import { CliError, printJson, progress } from '../output';
import { VaultRotationService } from './vault-rotation.service';
import { addDevKekVersion, kekSource } from './vault-keys';
import { Guarded } from '../operators/guarded';

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
    const n = Number(v);
    if (!Number.isInteger(n) || n < 1 || n > 10_000) throw new CliError('--batch-size must be a whole number from 1 to 10000');
    return n;
  }
}
