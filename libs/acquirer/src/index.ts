export * from './acquirer.connector';
export * from './sandbox-acquirer';
export * from './sandbox-call-log';
export * from './reconcile';
