export * from './options';
export * from './entities/merchant.entity';
export * from './entities/token-card.entity';
