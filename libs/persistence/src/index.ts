export * from './options';
export * from './entities/merchant.entity';
export * from './entities/token-card.entity';
export * from './transactions/transactions.repository';
export * from './outbox/outbox.relay';
export * from './settlement/recipients.repository';
export * from './settlement/fee-plans.repository';
export * from './settlement/ledger.repository';
