import 'reflect-metadata';
import { WorkerPatterns } from '@app/contracts';
import { bootWorker, exitOnBootFailure } from '@app/platform';
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
  });
}

main().catch(exitOnBootFailure('settlement'));
