import { DynamicModule, Module } from '@nestjs/common';
import { LedgerRepository } from '@app/persistence';
import { appImports } from '@app/boot';
import { CancelSettlement, CaptureSettlement } from '@app/settlement';
import { SettlementConfig } from './config/settlement.config';
import { SettlementHandler } from './split/settlement.handler';
import { SettlementService } from './split/settlement.service';
import { SettlementSweeper } from './split/settlement.sweeper';

@Module({})
export class SettlementModule {
  static forRoot(config: SettlementConfig): DynamicModule {
    return {
      module: SettlementModule,
      imports: appImports('settlement', config.base, config.dbPoolSize),
      controllers: [SettlementHandler],
      providers: [
        { provide: SettlementConfig, useValue: config },
        LedgerRepository,
        CaptureSettlement,
        CancelSettlement,
        SettlementService,
        SettlementSweeper,
      ],
    };
  }
}
