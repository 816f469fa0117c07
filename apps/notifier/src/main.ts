import './tracing';
import 'reflect-metadata';
import { WorkerPatterns } from '@app/contracts';
import { bootWorker, exitOnBootFailure } from '@app/boot';
import { loadNotifierConfig } from './config/notifier.config';
import { NotifierModule } from './notifier.module';
import { DELIVERY_QUEUE, RECOVERY_QUEUE } from '@app/webhooks/delivery';

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
    // Scaled on these as much as on the events: each delivery attempt is a job of the delivery queue.
    observeQueues: [DELIVERY_QUEUE, RECOVERY_QUEUE],
  });
}

main().catch(exitOnBootFailure('notifier'));
