// Pure webhook rules: the retry schedule, which addresses a webhook may reach, listener health and the
// throttle's values. The I/O side (DNS-pinned lookups, the delivery queue, replays) is `@app/webhooks/delivery`.
export * from './schedule';
export * from './address-rules';
export * from './listener-health';
export * from './throttle';
export * from './portal-link';
