import { Injectable } from '@nestjs/common';
import { Command, CommandRunner, Option } from 'nest-commander';
import { MerchantsRepository } from '@app/persistence';
import type { Keyring } from '@app/vault/keyring';
import { CliConfig } from '../config/cli.config';
import { parseBatchSize, parseMaxBatches, RotationOptions, RotationTarget, runKeyRotation } from '../keys/key-rotation';
import { Guarded } from '../operators/guarded';

/** The merchants' sealed webhook secrets, as a key rotation moves them (MerchantsRepository.resealSecretsBatch). */
@Injectable()
export class SecretsRotation implements RotationTarget {
  readonly keyring = 'SECRETS_KEKS';
  readonly movedLabel = 'resealed';
  readonly noun = "merchant's webhook secret";
  readonly state = 'sealed under';
  readonly readers = 'notifiers';

  constructor(private readonly merchants: MerchantsRepository) {}

  countRemaining(ring: Keyring): Promise<number> {
    return this.merchants.countSecretsNotUnder(ring.active.kid);
  }

  batch(ring: Keyring, limit: number): Promise<number> {
    return this.merchants.resealSecretsBatch(ring, limit);
  }
}

@Guarded('admin', 'secrets:rotate-key')
@Command({
  name: 'secrets:rotate-key',
  description:
    "Re-seal every merchant's webhook secrets under the active SECRETS_KEKS key (in development, first adds a new version); online, resumable",
})
export class SecretsRotateKeyCommand extends CommandRunner {
  constructor(
    private readonly rotation: SecretsRotation,
    private readonly config: CliConfig,
  ) {
    super();
  }

  run(_args: string[], opts: RotationOptions): Promise<void> {
    return runKeyRotation(this.config, this.rotation, opts);
  }

  @Option({ flags: '--batch-size <n>', description: 'merchants per transaction (default 500)' })
  parseBatchSize(v: string): number {
    return parseBatchSize(v);
  }

  @Option({ flags: '--max-batches <n>', description: 'stop after this many batches (run again to continue)' })
  parseMaxBatches(v: string): number {
    return parseMaxBatches(v);
  }
}
