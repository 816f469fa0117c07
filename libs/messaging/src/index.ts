export * from './bullmq.client';
export * from './bullmq.server';
export * from './bullmq.context';
export * from './typed-client';
export * from './errors';
export { withJobId, safeJobId } from './job-envelope';
export type { RemoteErrorPayload } from './job-envelope';
export { QueueDepthReader } from './queue-metrics';
export type { QueueDepth, QueueDepthOptions } from './queue-metrics';
