import { DynamicModule, Module } from '@nestjs/common';
import { appImports } from '@app/platform';
import { TokenizerConfig } from './config/tokenizer.config';
import { TokenCardsRepository } from './tokens/token-cards.repository';
import { TokensHandler } from './tokens/tokens.handler';
import { TokensService } from './tokens/tokens.service';

@Module({})
export class TokenizerModule {
  static forRoot(config: TokenizerConfig): DynamicModule {
    return {
      module: TokenizerModule,
      imports: appImports('tokenizer', config.base, config.dbPoolSize),
      controllers: [TokensHandler],
      providers: [{ provide: TokenizerConfig, useValue: config }, TokenCardsRepository, TokensService],
    };
  }
}
