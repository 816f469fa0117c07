// Webhook delivery I/O: the guarded DNS lookup, the BullMQ delivery queue, replays, and disabling and enabling a listener.
export * from './address-guard';
export * from './delivery-queue';
export * from './replay';
export * from './recovery';
export * from './listener-switch';
