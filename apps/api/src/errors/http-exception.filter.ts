import { ArgumentsHost, Catch, ExceptionFilter, HttpException } from '@nestjs/common';
import { PinoLogger } from 'nestjs-pino';
import type { FastifyReply } from 'fastify';
import { DomainError, ErrorCodes } from '@app/contracts';
import { ReplyTimeoutError, RemoteError, TransportUnavailableError } from '@app/messaging';
import { fromDomainError, internal, unavailable, wireError, WireError } from './wire-error';

/**
 * The only place that turns failures into HTTP. Anything unexpected becomes a plain 500 whose
 * body says nothing about the cause (the log has it, redacted); a dependency that is down is a
 * 503, never a 500.
 */
@Catch()
export class HttpExceptionFilter implements ExceptionFilter {
  constructor(private readonly logger: PinoLogger) {}

  catch(exception: unknown, host: ArgumentsHost): void {
    const reply = host.switchToHttp().getResponse<FastifyReply>();
    const wire = this.toWire(exception);
    reply.status(wire.httpStatus).send(wire.body);
  }

  toWire(e: unknown): WireError {
    if (e instanceof DomainError) return fromDomainError(e);
    if (e instanceof RemoteError) return fromDomainError(DomainError.fromPayload(e.payload));
    if (e instanceof ReplyTimeoutError) return unavailable('The card vault did not answer in time; retry later.');
    if (e instanceof TransportUnavailableError || isConnectionError(e)) {
      this.logger.warn({ err: describe(e) }, 'dependency unavailable');
      return unavailable();
    }
    const fastifyError = fromFastifyError(e);
    if (fastifyError) return fastifyError;
    if (e instanceof HttpException) {
      const status = e.getStatus();
      if (status === 404) return wireError(404, ErrorCodes.MalformedBody, 'No such endpoint.', '');
      return wireError(status, status >= 500 ? ErrorCodes.InternalError : ErrorCodes.InvalidField, e.message);
    }
    this.logger.error({ err: describe(e) }, 'unhandled error');
    return internal();
  }
}

/** Body-parsing failures raised by Fastify before a route runs. */
export function fromFastifyError(e: unknown): WireError | undefined {
  const code = (e as { code?: string })?.code;
  switch (code) {
    case 'FST_ERR_CTP_BODY_TOO_LARGE':
      return wireError(413, ErrorCodes.PayloadTooLarge, 'The request body is larger than 64 KiB.');
    case 'FST_ERR_CTP_INVALID_MEDIA_TYPE':
    case 'FST_ERR_CTP_INVALID_CONTENT_LENGTH':
      return wireError(415, ErrorCodes.UnsupportedMediaType, 'Content-Type must be application/json.');
    case 'FST_ERR_CTP_EMPTY_JSON_BODY':
      return wireError(400, ErrorCodes.MalformedBody, 'The request body is empty; send a JSON transaction-request.');
    default:
      if ((e as { statusCode?: number })?.statusCode === 400 && e instanceof SyntaxError) {
        return wireError(400, ErrorCodes.MalformedBody, 'The request body is not valid JSON.');
      }
      if (code === 'FST_ERR_CTP_INVALID_JSON_BODY' || (code ?? '').startsWith('FST_ERR_CTP')) {
        return wireError(400, ErrorCodes.MalformedBody, 'The request body is not valid JSON.');
      }
      return undefined;
  }
}

function isConnectionError(e: unknown): boolean {
  const code = (e as { code?: string })?.code ?? '';
  const message = (e as Error)?.message ?? '';
  return (
    ['ECONNREFUSED', 'ECONNRESET', 'ETIMEDOUT', 'EPIPE', 'ENOTFOUND', '57P01', '57P03', '08006', '08001', '08003'].includes(code) ||
    /Connection terminated|timeout exceeded when trying to connect|Connection is closed|Stream isn't writeable|MaxRetriesPerRequest/i.test(message)
  );
}

/** Only the error's class, code and message: never a request body, which may hold card data. */
function describe(e: unknown): Record<string, unknown> {
  return { type: (e as Error)?.name, code: (e as { code?: string })?.code, message: (e as Error)?.message };
}
