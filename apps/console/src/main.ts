import './tracing';
import 'reflect-metadata';
import { NestFactory } from '@nestjs/core';
import { FastifyAdapter, NestFastifyApplication } from '@nestjs/platform-fastify';
import { Logger } from 'nestjs-pino';
import { exitOnBootFailure } from '@app/boot';
import { edgeAdapterOptions, registerCorrelationHook, registerJsonBodyParser, registerMetricsHook } from '@app/http';
import { drainOnSignals } from '@app/platform';
import { setUpAdmin } from './admin/admin.setup';
import { loadConsoleConfig } from './config/console.config';
import { ConsoleModule } from './console.module';
import { setUpConsole } from './console/console.setup';
import { setUpPortal } from './console/portal.setup';

/**
 * The console app: the operators' console (/console), the merchants' portal (/portal) and /admin
 * (its JSON endpoints and the queue dashboard /admin/queues), apart from the merchant API, under
 * its own database role (gateway_console).
 */
async function bootstrap(): Promise<void> {
  const config = loadConsoleConfig();
  const adapter = new FastifyAdapter(edgeAdapterOptions(config.trustedProxies));
  // bodyParser: false, Nest's JSON parser is replaced by registerJsonBodyParser below; the
  // console's and the portal's forms register their own parser in their scopes.
  const app = await NestFactory.create<NestFastifyApplication>(ConsoleModule.forRoot(config), adapter, {
    bufferLogs: true,
    bodyParser: false,
  });
  app.useLogger(app.get(Logger));

  const fastify = app.getHttpAdapter().getInstance();
  // Every JSON body (the /admin ones: registered before the dashboard plugin, which inherits it)
  // is checked before any handler sees it, as the api's are.
  registerJsonBodyParser(fastify);
  registerCorrelationHook(fastify);
  registerMetricsHook(fastify);

  // The console first: it registers the cookie parser the admin hook reads the console session with.
  await setUpConsole(app);
  await setUpPortal(app);
  await setUpAdmin(app);

  await app.listen(config.port, config.host);
  drainOnSignals(app, app.get(Logger), () => fastify.close());
  app.get(Logger).log(`console listening on http://${config.host}:${config.port} (/console, /portal, /admin)`);
}

void bootstrap().catch(exitOnBootFailure('console'));
