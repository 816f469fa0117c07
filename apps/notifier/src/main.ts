import 'reflect-metadata';
import { WorkerPatterns } from '@app/contracts';
import { bootWorker, exitOnBootFailure } from '@app/platform';
import { loadNotifierConfig } from './config/notifier.config';
import { NotifierModule } from './notifier.module';

async function main(): Promise<void> {
  const config = loadNotifierConfig();
  await bootWorker({
    app: 'notifier',
    module: NotifierModule.forRoot(config),
    base: config.base,
    healthPort: config.healthPort,
    requiredPatterns: WorkerPatterns.notifier,
  });
}

main().catch(exitOnBootFailure('notifier'));
