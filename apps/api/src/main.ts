import './tracing';
import 'reflect-metadata';
import { NestFactory } from '@nestjs/core';
import { FastifyAdapter, NestFastifyApplication } from '@nestjs/platform-fastify';
import { DocumentBuilder, SwaggerModule } from '@nestjs/swagger';
import { Logger } from 'nestjs-pino';
import { exitOnBootFailure } from '@app/boot';
import { edgeAdapterOptions, registerCorrelationHook, registerJsonBodyParser, registerMetricsHook } from '@app/http';
import { drainOnSignals } from '@app/platform';
import { loadApiConfig } from './config/api.config';
import { DomainError, ErrorCodes } from '@app/contracts';
import { AppModule } from './app.module';

const JSON_TYPE = /^application\/json\s*(;|$)/i;

async function bootstrap(): Promise<void> {
  const config = loadApiConfig();
  const adapter = new FastifyAdapter(edgeAdapterOptions(config.trustedProxies));
  // bodyParser: false, Nest's JSON parser is replaced by registerJsonBodyParser below (and its
  // form parser is not wanted: only JSON is accepted).
  const app = await NestFactory.create<NestFastifyApplication>(AppModule.forRoot(config), adapter, { bufferLogs: true, bodyParser: false });
  app.useLogger(app.get(Logger));

  const fastify = app.getHttpAdapter().getInstance();
  // Every JSON body is checked before any handler sees it: UTF-8, depth, control characters... (issue 13).
  registerJsonBodyParser(fastify);
  registerCorrelationHook(fastify);
  // docs/merchants/envelope.md: only JSON is accepted. Checked before any parser runs, so a form or text body is a
  // 415 whatever parsers the framework registered.
  fastify.addHook('onRequest', (req, _reply, done) => {
    if (req.method === 'POST' && !JSON_TYPE.test(req.headers['content-type'] ?? '')) {
      done(new DomainError('media_type', ErrorCodes.UnsupportedMediaType, 'Content-Type must be application/json.'));
    } else {
      done();
    }
  });
  registerMetricsHook(fastify);

  const doc = new DocumentBuilder()
    .setTitle('Card gateway API')
    .setDescription('Merchant contract v1: see docs/merchants/. Every request is a transaction-request envelope.')
    .setVersion('1.0.0')
    .build();
  SwaggerModule.setup('docs', app, () => SwaggerModule.createDocument(app, doc));

  await app.listen(config.port, config.host);
  drainOnSignals(app, app.get(Logger), () => fastify.close());
  app.get(Logger).log(`api listening on http://${config.host}:${config.port}`);
}

void bootstrap().catch(exitOnBootFailure('api'));
