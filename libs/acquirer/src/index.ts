export * from './acquirer.connector';
export * from './sandbox-acquirer';
export * from './sandbox-call-log';
export * from './reconcile';
export * from './breaker';
export * from './router';
export * from './connectors';
export * from './outcomes';
