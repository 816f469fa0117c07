export * from './money';
export * from './percentage';
export * from './fees';
export * from './split-engine';
export * from './adjustments';
