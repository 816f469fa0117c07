// The barrel holds what every process may load cheaply. The HTTP apps' logging (pino) and /health +
// /metrics module (terminus, swagger) are imported from '@app/platform/logging' and
// '@app/platform/ops.module', so that a short process such as the operator CLI does not load them.
export * from './correlation';
export * from './env';
export * from './safe-error';
export * from './metrics';
export * from './shutdown';
export * from './periodic-pass';
export * from './dependency-errors';
export * from './redis';
export * from './pauses';
export * from './published-sweep';
