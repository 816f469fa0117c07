export * from './correlation';
export * from './env';
export * from './logging';
export * from './ops.module';
export * from './metrics';
export * from './worker-bootstrap';
export * from './app-imports';
export * from './shutdown';
