import type { IncomingMessage } from 'node:http';
import type { FastifyInstance } from 'fastify';
import type { FastifyAdapter } from '@nestjs/platform-fastify';
import { httpInFlight, httpRequests, runWithCorrelationId } from '@app/platform';
import { requestIdOf } from '@app/platform/logging';
import { nameRequestSpan, tracingEnabled } from '@app/platform/tracing';

/** The Fastify options of a web app (the api, the console): the same limits, proxies and request ids. */
export function edgeAdapterOptions(trustedProxies: string[]): ConstructorParameters<typeof FastifyAdapter>[0] {
  return {
    bodyLimit: 64 * 1024,
    routerOptions: { ignoreTrailingSlash: true },
    logger: false,
    // req.ip (what the limits on failed authentication count, and the audit trail's origin) is the
    // socket's address, or X-Forwarded-For's only when the socket is a proxy of TRUSTED_PROXIES.
    trustProxy: trustedProxies.length ? trustedProxies : false,
    // One id for Fastify, the logs and the jobs: the caller's x-request-id when it is plain.
    genReqId: (req) => requestIdOf(req as IncomingMessage),
  };
}

/**
 * The request's correlation id and its metrics. The rest of the request runs inside its
 * correlation id (the request id), so the jobs it sends carry it to the workers. A hook rather
 * than a Nest interceptor, which would wrap every handler in an Observable and two AsyncResource
 * bindings per request. Registered first of the hooks, so every answer (a 415 too) names the id
 * used: the caller's own when it was safe, else a new one.
 */
export function registerCorrelationHook(fastify: FastifyInstance): void {
  fastify.addHook('onRequest', (req, reply, done) => {
    // In flight until the answer is sent or the caller goes away ('close' comes either way).
    httpInFlight.inc();
    reply.raw.once('close', () => httpInFlight.dec());
    reply.header('x-request-id', req.id);
    runWithCorrelationId(req.id, done);
  });
}

/** Each answer counted by method, route and status (http_requests_seconds). */
export function registerMetricsHook(fastify: FastifyInstance): void {
  // Only with tracing on: untraced, a hook per request would name nothing.
  if (tracingEnabled())
    fastify.addHook('onRequest', (req, _reply, done) => {
      nameRequestSpan(req.method, req.routeOptions?.url ?? 'unmatched');
      done();
    });
  fastify.addHook('onResponse', (req, reply, done) => {
    const route = req.routeOptions?.url ?? 'unmatched';
    httpRequests.observe({ method: req.method, route, status: String(reply.statusCode) }, reply.elapsedTime / 1000);
    done();
  });
}
