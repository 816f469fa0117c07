import 'reflect-metadata';
import { NestFactory } from '@nestjs/core';
import { FastifyAdapter, NestFastifyApplication } from '@nestjs/platform-fastify';
import { DocumentBuilder, SwaggerModule } from '@nestjs/swagger';
import { Logger, PinoLogger } from 'nestjs-pino';
import { httpRequests } from '@app/platform';
import { loadApiConfig } from './config/api.config';
import { fromFastifyError, HttpExceptionFilter } from './errors/http-exception.filter';
import { AppModule } from './app.module';

async function bootstrap(): Promise<void> {
  const adapter = new FastifyAdapter({ bodyLimit: 64 * 1024, ignoreTrailingSlash: true, logger: false, trustProxy: false });
  const config = loadApiConfig();
  const app = await NestFactory.create<NestFastifyApplication>(AppModule.forRoot(config), adapter, { bufferLogs: true });
  app.useLogger(app.get(Logger));
  app.enableShutdownHooks();

  const fastify = app.getHttpAdapter().getInstance();
  // Body-parsing failures (too large, wrong type, broken JSON) happen before Nest routes the
  // request; answer them with the same wire error body as everything else.
  const filter = new HttpExceptionFilter(await app.resolve(PinoLogger));
  fastify.setErrorHandler((err, _req, reply) => {
    const wire = fromFastifyError(err) ?? filter.toWire(err);
    void reply.status(wire.httpStatus).send(wire.body);
  });
  fastify.addHook('onResponse', (req, reply, done) => {
    const route = req.routeOptions?.url ?? 'unmatched';
    httpRequests.observe({ method: req.method, route, status: String(reply.statusCode) }, reply.elapsedTime / 1000);
    done();
  });

  const doc = new DocumentBuilder()
    .setTitle('Card gateway API')
    .setDescription('Merchant contract v1: see WIRE.md. Every request is a transaction-request envelope.')
    .setVersion('1.0.0')
    .build();
  SwaggerModule.setup('docs', app, () => SwaggerModule.createDocument(app, doc));

  await app.listen(config.port, config.host);
  app.get(Logger).log(`api listening on http://${config.host}:${config.port}`);
}

void bootstrap().catch((e) => {
  process.stderr.write(`api failed to start: ${(e as Error).message}\n`);
  process.exit(1);
});
