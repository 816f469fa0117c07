import { DynamicModule, Module } from '@nestjs/common';
import { appImports } from '@app/platform';
import { SettlementConfig } from './config/settlement.config';

/** Bootstrap, health and config only; its handlers arrive with their issue. */
@Module({})
export class SettlementModule {
  static forRoot(config: SettlementConfig): DynamicModule {
    return {
      module: SettlementModule,
      imports: appImports('settlement', config.base, config.dbPoolSize),
      providers: [{ provide: SettlementConfig, useValue: config }],
    };
  }
}
