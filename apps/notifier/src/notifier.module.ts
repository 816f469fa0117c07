import { DynamicModule, Module } from '@nestjs/common';
import { appImports } from '@app/platform';
import { NotifierConfig } from './config/notifier.config';

/** Bootstrap, health and config only; its handlers arrive with their issue. */
@Module({})
export class NotifierModule {
  static forRoot(config: NotifierConfig): DynamicModule {
    return {
      module: NotifierModule,
      imports: appImports('notifier', config.base, config.dbPoolSize),
      providers: [{ provide: NotifierConfig, useValue: config }],
    };
  }
}
