// Pure webhook rules: the retry schedule and which addresses a webhook may reach. The I/O side
// (DNS-pinned lookups, the delivery queue, replays) is `@app/webhooks/delivery`.
export * from './schedule';
export * from './address-rules';
export * from './listener-health';
export * from './portal-link';
