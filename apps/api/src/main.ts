import type { IncomingMessage } from 'node:http';
import 'reflect-metadata';
import { NestFactory } from '@nestjs/core';
import { FastifyAdapter, NestFastifyApplication } from '@nestjs/platform-fastify';
import { DocumentBuilder, SwaggerModule } from '@nestjs/swagger';
import { Logger } from 'nestjs-pino';
import { exitOnBootFailure } from '@app/boot';
import { drainOnSignals, httpInFlight, httpRequests, requestIdOf, runWithCorrelationId } from '@app/platform';
import { loadApiConfig } from './config/api.config';
import { DomainError, ErrorCodes } from '@app/contracts';
import { AppModule } from './app.module';
import { setUpAdmin } from './admin/admin.setup';
import { setUpConsole } from './console/console.setup';
import { setUpPortal } from './console/portal.setup';
import { registerJsonBodyParser } from './http/json-body';

const JSON_TYPE = /^application\/json\s*(;|$)/i;

async function bootstrap(): Promise<void> {
  const config = loadApiConfig();
  const adapter = new FastifyAdapter({
    bodyLimit: 64 * 1024,
    routerOptions: { ignoreTrailingSlash: true },
    logger: false,
    // req.ip (what the limits on failed authentication count, and the audit trail's origin) is the
    // socket's address, or X-Forwarded-For's only when the socket is a proxy of TRUSTED_PROXIES.
    trustProxy: config.trustedProxies.length ? config.trustedProxies : false,
    // One id for Fastify, the logs and the jobs: the caller's x-request-id when it is plain.
    genReqId: (req: IncomingMessage) => requestIdOf(req),
  });
  // bodyParser: false, Nest's JSON parser is replaced by registerJsonBodyParser below (and its
  // form parser is not wanted: only JSON is accepted).
  const app = await NestFactory.create<NestFastifyApplication>(AppModule.forRoot(config), adapter, { bufferLogs: true, bodyParser: false });
  app.useLogger(app.get(Logger));

  const fastify = app.getHttpAdapter().getInstance();
  // Every JSON body (the /admin ones too: registered before the dashboard plugin, which inherits
  // it) is checked before any handler sees it: UTF-8, depth, control characters... (issue 13).
  registerJsonBodyParser(fastify);
  // The rest of the request runs inside its correlation id (the request id), so the jobs it sends
  // carry it to the workers. A hook rather than a Nest interceptor, which would wrap every
  // handler in an Observable and two AsyncResource bindings per request. First of the hooks, so
  // every answer (a 415 too) names the id used: the caller's own when it was safe, else a new one.
  fastify.addHook('onRequest', (req, reply, done) => {
    // In flight until the answer is sent or the caller goes away ('close' comes either way).
    httpInFlight.inc();
    reply.raw.once('close', () => httpInFlight.dec());
    reply.header('x-request-id', req.id);
    runWithCorrelationId(req.id, done);
  });
  // WIRE.md 1: only JSON is accepted (the console's and the portal's forms, under /console and /portal, excepted). Checked
  // before any parser runs, so a form or text body is a 415 whatever parsers the framework registered.
  fastify.addHook('onRequest', (req, _reply, done) => {
    if (
      req.method === 'POST' &&
      !/^\/(admin|console|portal)(\/|$)/.test(req.routeOptions?.url ?? '') &&
      !JSON_TYPE.test(req.headers['content-type'] ?? '')
    ) {
      done(new DomainError('media_type', ErrorCodes.UnsupportedMediaType, 'Content-Type must be application/json.'));
    } else {
      done();
    }
  });
  fastify.addHook('onResponse', (req, reply, done) => {
    const route = req.routeOptions?.url ?? 'unmatched';
    httpRequests.observe({ method: req.method, route, status: String(reply.statusCode) }, reply.elapsedTime / 1000);
    done();
  });

  // The console first: it registers the cookie parser the admin hook reads the console session with.
  await setUpConsole(app);
  await setUpPortal(app);
  await setUpAdmin(app);

  const doc = new DocumentBuilder()
    .setTitle('Card gateway API')
    .setDescription('Merchant contract v1: see WIRE.md. Every request is a transaction-request envelope.')
    .setVersion('1.0.0')
    .build();
  SwaggerModule.setup('docs', app, () => SwaggerModule.createDocument(app, doc));

  await app.listen(config.port, config.host);
  drainOnSignals(app, app.get(Logger), () => fastify.close());
  app.get(Logger).log(`api listening on http://${config.host}:${config.port}`);
}

void bootstrap().catch(exitOnBootFailure('api'));
