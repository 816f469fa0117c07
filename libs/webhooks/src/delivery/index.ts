// Webhook delivery I/O: the guarded DNS lookup, the BullMQ delivery queue and replays.
export * from './address-guard';
export * from './delivery-queue';
export * from './replay';
export * from './recovery';
