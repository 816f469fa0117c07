import 'reflect-metadata';
import { WorkerPatterns } from '@app/contracts';
import { bootWorker, exitOnBootFailure } from '@app/platform';
import { loadTokenizerConfig } from './config/tokenizer.config';
import { TokenizerModule } from './tokenizer.module';

async function main(): Promise<void> {
  const config = loadTokenizerConfig();
  await bootWorker({
    app: 'tokenizer',
    module: TokenizerModule.forRoot(config),
    base: config.base,
    healthPort: config.healthPort,
    requiredPatterns: WorkerPatterns.tokenizer,
    defaultConcurrency: config.concurrency,
  });
}

main().catch(exitOnBootFailure('tokenizer'));
