// App wiring that needs the database, the queue or the vault; libs/platform stays free of them.
export * from './app-imports';
export * from './database-role-check';
export * from './worker-bootstrap';
export * from './queue-client';
export * from './fee-defaults';
export * from './keyring-env';
export * from './retention';
