import { Logger } from '@nestjs/common';
import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { errorClassOf } from '@app/operators';
import { ConsoleAsset } from './assets';
import { Frame, problemPage } from './layout';

/**
 * Every console and portal answer: scripts and styles from this origin only (no inline script),
 * no framing, forms posting back here only, no referrer sent, nothing cached.
 */
const CSP = [
  "default-src 'none'",
  "script-src 'self'",
  "style-src 'self'",
  "img-src 'self' data:",
  "connect-src 'self'",
  "form-action 'self'",
  "frame-ancestors 'none'",
  "base-uri 'none'",
].join('; ');

const logger = new Logger('Console');

export const sendPage = (reply: FastifyReply, status: number, body: string) =>
  reply.code(status).header('content-type', 'text/html; charset=utf-8').send(body);

/**
 * What the console's and the portal's scopes share: the security headers on every answer, form
 * bodies parsed, the static assets under <prefix>/assets, and failures answered as pages, never a
 * stack or a driver's message (which could quote what was sent). `frameOf` makes the frame of an
 * error page for that scope.
 */
export function setUpPageScope(
  scope: FastifyInstance,
  assets: Map<string, ConsoleAsset>,
  frameOf: (req: FastifyRequest, reply: FastifyReply, title: string) => Frame,
): void {
  // Forms post application/x-www-form-urlencoded; /admin takes JSON (main.ts).
  scope.addContentTypeParser('application/x-www-form-urlencoded', { parseAs: 'string', bodyLimit: 16 * 1024 }, (_req, body, done) => {
    done(null, Object.fromEntries(new URLSearchParams(body as string)));
  });

  scope.addHook('onRequest', (_req, reply, done) => {
    void reply
      .header('content-security-policy', CSP)
      .header('x-content-type-options', 'nosniff')
      .header('referrer-policy', 'no-referrer')
      .header('x-frame-options', 'DENY')
      .header('cache-control', 'no-store');
    done();
  });

  // A refused CSRF token (403, see page-tokens.ts) or any other failure.
  scope.setErrorHandler((error: FastifyError, req, reply) => {
    const status = error.statusCode && error.statusCode >= 400 && error.statusCode < 500 ? error.statusCode : 500;
    const text =
      status === 403
        ? 'The form was stale or not sent from this page (CSRF check failed): reload the page and try again.'
        : status === 500
          ? 'Something failed on the server; see the console log for this request id.'
          : 'The request was not valid.';
    // The class only: a driver's message could quote what was sent.
    if (status === 500) logger.error(`${scope.prefix} request ${req.id} failed: ${errorClassOf(error)}`);
    return sendPage(reply, status, problemPage(frameOf(req, reply, String(status)), status, text));
  });

  // An unknown path under the prefix is a page too (behind the same session check, with the same headers).
  scope.setNotFoundHandler((req, reply) => sendPage(reply, 404, problemPage(frameOf(req, reply, 'Not found'), 404, 'No such page.')));

  scope.get('/assets/:file', (req, reply) => {
    const asset = assets.get((req.params as { file: string }).file);
    if (!asset) return reply.code(404).send();
    return reply.header('content-type', asset.type).header('cache-control', 'public, max-age=300').send(asset.body);
  });
}
