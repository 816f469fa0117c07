export * from './capture-settlement';
export * from './cancel-settlement';
export * from './chargeback-settlement';
export * from './verify-ledger';
