export * from './outbox.relay';
export * from './outbox-metrics';
