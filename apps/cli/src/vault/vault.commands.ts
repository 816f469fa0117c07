import { Command, CommandRunner, Option } from 'nest-commander';
import { CliConfig } from '../config/cli.config';
import { parseBatchSize, parseMaxBatches, RotationOptions, runKeyRotation } from '../keys/key-rotation';
import { VaultRotationService } from './vault-rotation.service';
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
