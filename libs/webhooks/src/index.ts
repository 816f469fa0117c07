export * from './schedule';
export * from './address-guard';
export * from './delivery-queue';
export * from './replay';
