export * from './outbox.relay';
