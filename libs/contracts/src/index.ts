export * from './patterns';
export * from './catalogue';
export * from './error-codes';
export * from './tokens';
export * from './errors';
export * from './transactions';
export * from './split';
export * from './transaction-response';
