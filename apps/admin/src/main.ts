import './tracing';
import 'reflect-metadata';
import { NestFactory } from '@nestjs/core';
import { FastifyAdapter, NestFastifyApplication } from '@nestjs/platform-fastify';
import { Logger } from 'nestjs-pino';
import { exitOnBootFailure } from '@app/boot';
import { drainOnSignals } from '@app/platform';
import { AdminModule } from './admin.module';
import { CommandRunner } from './commands/command-runner';
import { loadAdminConfig } from './config/admin.config';

/**
 * The admin app: where operator commands run (POST /admin/commands/<name>). It alone holds the
 * operator database role; operators hold an operator token and reach it over HTTP.
 */
async function main(): Promise<void> {
  const config = loadAdminConfig();
  const adapter = new FastifyAdapter({ bodyLimit: 512 * 1024, logger: false, trustProxy: false });
  const app = await NestFactory.create<NestFastifyApplication>(AdminModule.forRoot(config), adapter, { bufferLogs: true });
  const logger = app.get(Logger);
  app.useLogger(logger);
  // SIGTERM: no new command, and the ones running end before the process does.
  drainOnSignals(app, logger, () => app.get(CommandRunner).idle());
  await app.listen(config.port, config.host);
  logger.log(`admin app up on http://${config.host}:${config.port} (POST /admin/commands/<name>)`);
}

main().catch(exitOnBootFailure('admin'));
