import 'reflect-metadata';
import { WorkerPatterns } from '@app/contracts';
import { bootWorker, exitOnBootFailure } from '@app/boot';
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
    // Turning an event into a stored delivery is a few milliseconds of I/O: many in flight.
    defaultConcurrency: 64,
  });
}

main().catch(exitOnBootFailure('notifier'));
