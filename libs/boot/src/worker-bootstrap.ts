import { NestFactory } from '@nestjs/core';
import { FastifyAdapter, NestFastifyApplication } from '@nestjs/platform-fastify';
import { Logger } from 'nestjs-pino';
import { BullMqServer } from '@app/messaging';
import { type BaseConfig, drainOnSignals, safeErrorText } from '@app/platform';

export interface WorkerBoot {
  app: string;
  module: unknown;
  base: BaseConfig;
  healthPort: number;
  requiredPatterns: readonly string[];
  concurrency?: Record<string, number>;
  defaultConcurrency?: number;
  /** Queues this worker feeds itself (not through the transport) whose depth its /metrics also exports. */
  observeQueues?: string[];
}

/**
 * A worker is a Nest app with two faces: the BullMQ transport that feeds its handlers, and a
 * small HTTP server for /health and /metrics. SIGTERM closes the transport first, which waits for
 * in-flight jobs, so a deploy never cuts a job in half.
 */
export async function bootWorker(opts: WorkerBoot): Promise<NestFastifyApplication> {
  const app = await NestFactory.create<NestFastifyApplication>(opts.module as never, new FastifyAdapter({ logger: false }), {
    bufferLogs: true,
  });
  const logger = app.get(Logger);
  app.useLogger(logger);
  const transport = new BullMqServer({
    connection: opts.base.redis,
    prefix: opts.base.queuePrefix,
    partitions: opts.base.queuePartitions,
    requiredPatterns: [...opts.requiredPatterns],
    concurrency: { ...opts.concurrency, ...opts.base.workerConcurrency },
    defaultConcurrency: opts.defaultConcurrency,
    observeQueues: opts.observeQueues,
    eventRetry: { ...opts.base.eventRetry, keepDeadS: opts.base.keepFailedJobsS },
  });
  app.connectMicroservice({ strategy: transport }, { inheritAppConfig: true });
  drainOnSignals(app, logger, () => transport.close());
  await app.startAllMicroservices();
  await app.listen(opts.healthPort, opts.base.healthHost);
  logger.log(`${opts.app} worker up; health on http://${opts.base.healthHost}:${opts.healthPort}/health`);
  return app;
}

export function exitOnBootFailure(app: string) {
  return (e: unknown): never => {
    process.stderr.write(`${app} failed to start: ${safeErrorText(e)}\n`);
    process.exit(1);
  };
}
