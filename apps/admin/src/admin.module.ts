import { DynamicModule, Module } from '@nestjs/common';
import { appImports } from '@app/boot';
import { AdminConfig } from './config/admin.config';
import { CommandRunner } from './commands/command-runner';
import { CommandsController } from './commands/commands.controller';

@Module({})
export class AdminModule {
  static forRoot(config: AdminConfig): DynamicModule {
    return {
      module: AdminModule,
      imports: appImports('admin', config.base, config.dbPoolSize),
      controllers: [CommandsController],
      providers: [{ provide: AdminConfig, useValue: config }, CommandRunner],
    };
  }
}
