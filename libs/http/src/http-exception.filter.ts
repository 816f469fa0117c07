import { ArgumentsHost, Catch, ExceptionFilter, HttpException } from '@nestjs/common';
import { PinoLogger } from 'nestjs-pino';
import type { FastifyReply } from 'fastify';
import { STATUS_CODES } from 'node:http';
import { DomainError, DomainErrorPayload, ErrorCodes } from '@app/contracts';
import { ReplyTimeoutError, RemoteError, TransportUnavailableError } from '@app/messaging';
import { TooManyRequestsError } from './rate-limit.service';
import { unavailabilityOf } from '@app/platform';
import { fromDomainError, internal, unavailable, wireError, WireError } from './wire-error';

/**
 * The only place that turns failures into HTTP. Anything unexpected becomes a plain 500 whose
 * body says nothing about the cause (the log has its type, code and scrubbed message: the loggers'
 * `err` serializer is safeError); a dependency that is down is a 503, never a 500.
 */
@Catch()
export class HttpExceptionFilter implements ExceptionFilter {
  constructor(private readonly logger: PinoLogger) {}

  catch(exception: unknown, host: ArgumentsHost): void {
    const reply = host.switchToHttp().getResponse<FastifyReply>();
    if (isHealthReport(exception)) {
      // /health's own 503 body names the dependency that is down: operators read it as it is.
      reply.status(503).send(exception.getResponse());
      return;
    }
    const wire = this.toWire(exception);
    if (exception instanceof TooManyRequestsError) reply.header('Retry-After', String(exception.retryAfterS));
    reply.status(wire.httpStatus).send(wire.body);
  }

  toWire(e: unknown): WireError {
    if (e instanceof DomainError) return fromDomainError(e);
    if (e instanceof RemoteError) return fromDomainError(DomainError.fromPayload(e.payload as DomainErrorPayload));
    if (e instanceof ReplyTimeoutError) return unavailable('The card vault did not answer in time; retry later.');
    const cause = e instanceof TransportUnavailableError ? 'queue' : unavailabilityOf(e);
    if (cause) {
      // By cause and code: a cancelled statement's text and parameters never reach the log.
      this.logger.warn({ err: e, cause }, 'dependency unavailable');
      return unavailable();
    }
    if (e instanceof HttpException) return fromFrameworkError(e.getStatus());
    // 42501: the app's database role lacks a grant (libs/persistence/src/roles.ts), a deployment error to say plainly.
    this.logger.error(
      { err: e },
      (e as { code?: string })?.code === '42501' ? "refused by the database: this app's role lacks a grant" : 'unhandled error',
    );
    return internal();
  }
}

/**
 * The framework's own errors: body parsing (Nest wraps Fastify's parser errors) and unknown
 * routes. Their messages are never passed on: a JSON parse error can quote the body.
 */
function fromFrameworkError(status: number): WireError {
  switch (status) {
    case 400:
      return wireError(400, ErrorCodes.MalformedBody, 'The request body is not valid JSON.');
    case 404:
      return wireError(404, ErrorCodes.MalformedBody, 'No such endpoint.');
    case 413:
      return wireError(413, ErrorCodes.PayloadTooLarge, 'The request body is larger than 64 KiB.');
    case 415:
      return wireError(415, ErrorCodes.UnsupportedMediaType, 'Content-Type must be application/json.');
    case 503:
      return unavailable();
    default:
      return status >= 500 ? internal() : wireError(status, ErrorCodes.InvalidField, STATUS_CODES[status] ?? 'Request rejected.');
  }
}

function isHealthReport(e: unknown): e is HttpException {
  if (!(e instanceof HttpException) || e.getStatus() !== 503) return false;
  const body = e.getResponse() as { status?: string; details?: unknown };
  return body?.status === 'error' && typeof body.details === 'object';
}
