import './tracing';
import 'reflect-metadata';
import { WorkerPatterns } from '@app/contracts';
import { bootWorker, exitOnBootFailure } from '@app/boot';
import { loadSettlementConfig } from './config/settlement.config';
import { SettlementModule } from './settlement.module';

async function main(): Promise<void> {
  const config = loadSettlementConfig();
  await bootWorker({
    app: 'settlement',
    module: SettlementModule.forRoot(config),
    base: config.base,
    healthPort: config.healthPort,
    requiredPatterns: WorkerPatterns.settlement,
    // A captured event waits up to CAPTURE_BATCH_MS for others to be settled with it: enough jobs
    // in flight that the wait never limits the rate (64 per 20 ms is 3 200 events/s).
    defaultConcurrency: 64,
  });
}

main().catch(exitOnBootFailure('settlement'));
