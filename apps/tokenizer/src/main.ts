import './tracing';
import 'reflect-metadata';
import { Patterns, WorkerPatterns } from '@app/contracts';
import { bootWorker, exitOnBootFailure } from '@app/boot';
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
    // A capture or cancel waiting its turn on a busy transaction holds its job slot while it waits
    // (a promise, no connection): more slots, so one crowded transaction cannot stall the others.
    concurrency: { [Patterns.CardCapture]: config.operationConcurrency, [Patterns.CardCancel]: config.operationConcurrency },
  });
}

main().catch(exitOnBootFailure('tokenizer'));
